// libcurl's URL API called directly (the oracle's view of a URL), and byte helpers.

import CCurl

/// One URL parsed by libcurl on a handle of its own.
struct CurlURL {
    let url: String
    let scheme: String?
    let host: String?
    let port: String?
    let path: String?
    let query: String?
    let fragment: String?

    /// `text` parsed with `flags` (0: what the engine uses for a request URL); nil when libcurl refuses it.
    init?(_ text: String, flags: UInt32 = 0) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard text.withCString({ curl_url_set(handle, CURLUPART_URL, $0, flags) }) == CURLUE_OK,
            let url = Self.part(handle, CURLUPART_URL)
        else { return nil }
        self.init(handle, url: url)
    }

    private init(_ handle: OpaquePointer, url: String) {
        self.url = url
        scheme = Self.part(handle, CURLUPART_SCHEME)
        host = Self.part(handle, CURLUPART_HOST)
        port = Self.part(handle, CURLUPART_PORT)
        path = Self.part(handle, CURLUPART_PATH)
        query = Self.part(handle, CURLUPART_QUERY)
        fragment = Self.part(handle, CURLUPART_FRAGMENT)
    }

    /// `reference` resolved against `base` as libcurl resolves a `Location` it does not follow
    /// (`CURLINFO_REDIRECT_URL`: lib/transfer.c `Curl_follow`, FOLLOW_FAKE, flags
    /// `CURLU_NON_SUPPORT_SCHEME` on the handle holding the request URL); nil when either is refused.
    static func resolvedAsLibcurlReports(_ reference: String, against base: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard base.withCString({ curl_url_set(handle, CURLUPART_URL, $0, 0) }) == CURLUE_OK,
            reference.withCString({ curl_url_set(handle, CURLUPART_URL, $0, UInt32(CURLU_NON_SUPPORT_SCHEME)) })
                == CURLUE_OK
        else { return nil }
        return part(handle, CURLUPART_URL)
    }

    private static func part(_ handle: OpaquePointer, _ part: CURLUPart) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &pointer, 0) == CURLUE_OK, let pointer else { return nil }
        defer { curl_free(pointer) }
        return String(cString: pointer)
    }
}

enum Bytes {
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }

    static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x46, 0x61...0x66: true
        default: false
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        default: byte - 0x61 + 10
        }
    }

    /// `%XX` decoded; nil when a `%` is not followed by two hex digits.
    static func percentDecoded(_ text: some Collection<UInt8>) -> [UInt8]? {
        let bytes = Array(text)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return nil }
                out.append(hexValue(bytes[index + 1]) << 4 | hexValue(bytes[index + 2]))
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// How a string shows in an oracle message: escaped, so control bytes and invisible marks are seen.
    static func show(_ text: String?) -> String {
        guard let text else { return "nil" }
        return text.debugDescription + " " + text.utf8.map { String($0, radix: 16) }.joined(separator: " ")
    }

    static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): lhs.utf8.elementsEqual(rhs.utf8)
        default: false
        }
    }
}
