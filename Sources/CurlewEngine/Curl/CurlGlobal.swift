// Curlew — process-wide libcurl initialisation, done exactly once.

import CCurl
import CCurlShims

enum CurlGlobal {
    /// `curl_global_init` is not thread-safe and must run once before any handle exists; a Swift
    /// static `let` is initialised exactly once, thread-safely, on first use. SIGPIPE is ignored in the
    /// same step: libcurl writes to sockets a peer may have closed, and with `CURLOPT_NOSIGNAL` set it
    /// relies on the process not dying of that signal.
    static let initialized: Bool = {
        curlew_ignore_sigpipe()
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()
}
