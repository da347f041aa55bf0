// Curlew — the session's cookie jar, read and changed on the loop thread through one dedicated handle.

import CCurl
import CCurlShims

#if canImport(Glibc)
import Glibc
#endif

/// What callers ask of the cookie jar.
enum CookieCommand: Sendable {
    /// Every cookie.
    case list
    /// Forget every cookie.
    case clear
    /// Write a file jar to its file.
    case flush
    /// Add (or replace) these cookies.
    case store([CurlSession.Cookie])
}

extension LoopThread {
    /// Makes the handle through which the jar is loaded, listed, changed and written: it holds the
    /// jar's share, the cookie file to read and the file to write.
    func openCookieJar() {
        guard let share = defaults.cookieShare, let handle = EasyHandle() else { return }
        _ = curlew_easy_setopt_share(handle.raw, share)
        switch defaults.cookieStorage {
        case .file(let path):
            // Loads the file into the shared jar once, now rather than at the first transfer.
            handle.set(CURLOPT_COOKIEFILE, string: path)
            handle.set(CURLOPT_COOKIELIST, string: "RELOAD")
            // libcurl reads every cookie file again before each write, which would bring back cookies
            // deleted or cleared since: forget the file list (this detaches the handle from the jar)
            // and attach the share again before naming the file to write.
            handle.set(CURLOPT_COOKIEFILE, nil)
            _ = curlew_easy_setopt_share(handle.raw, share)
            handle.set(CURLOPT_COOKIEJAR, string: path)
        case .inMemory, .disabled:
            handle.set(CURLOPT_COOKIEFILE, string: "")
        }
        cookieJarHandle = handle
    }

    /// Writes a file jar and closes the jar's handle (shutdown).
    func closeCookieJar() {
        guard let handle = cookieJarHandle else { return }
        if case .file = defaults.cookieStorage { handle.set(CURLOPT_COOKIELIST, string: "FLUSH") }
        handle.destroy()
        cookieJarHandle = nil
    }

    /// Carries out a jar command; answers with the cookies for `.list`, nothing otherwise.
    func perform(_ command: CookieCommand) -> [CurlSession.Cookie] {
        guard let handle = cookieJarHandle else { return [] }
        switch command {
        case .list:
            var list: UnsafeMutablePointer<curl_slist>?
            guard curlew_easy_getinfo_slist(handle.raw, CURLINFO_COOKIELIST, &list) == CURLE_OK else { return [] }
            defer { curl_slist_free_all(list) }
            var cookies: [CurlSession.Cookie] = []
            var node = list
            // libcurl drops expired cookies only when it next matches or adds one; callers should never
            // see a cookie a request would no longer send.
            let now = time(nil)
            while let current = node {
                if let data = current.pointee.data, let cookie = CurlSession.Cookie(netscapeLine: String(cString: data)),
                    !cookie.hasExpired(at: now)
                {
                    cookies.append(cookie)
                }
                node = current.pointee.next
            }
            return cookies
        case .clear:
            handle.set(CURLOPT_COOKIELIST, string: "ALL")
        case .flush:
            if case .file = defaults.cookieStorage { handle.set(CURLOPT_COOKIELIST, string: "FLUSH") }
        case .store(let cookies):
            for cookie in cookies { handle.set(CURLOPT_COOKIELIST, string: cookie.netscapeLine) }
        }
        return []
    }
}
