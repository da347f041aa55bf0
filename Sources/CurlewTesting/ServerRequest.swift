// Curlew — a request as the loopback test server received it.

/// A request received by ``LocalHTTPServer``, with its body fully read.
public struct ServerRequest: Sendable {
    /// The method as sent, e.g. `PATCH`.
    public var method: String
    /// Path and query as sent.
    public var uri: String
    /// The path without the query.
    public var path: String
    /// Decoded query items (the last one wins for repeated names).
    public var query: [String: String]
    /// Header fields in order, repeated fields kept.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]
    /// Which accepted connection carried the request (1-based, in order of acceptance).
    public var connectionID: Int

    /// Creates a request record.
    public init(
        method: String, uri: String, headers: [(name: String, value: String)], body: [UInt8], connectionID: Int
    ) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
        self.connectionID = connectionID
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = parts.first.map(String.init) ?? uri
        var query: [String: String] = [:]
        if parts.count > 1 {
            for item in parts[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.percentDecoded(pair[0])
                query[name] = pair.count > 1 ? Self.percentDecoded(pair[1]) : ""
            }
        }
        self.query = query
    }

    /// The first value of a header field, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of a header field, in order.
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Percent-decoding with `+` as space, as HTML forms and most query strings use.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(0x20)
            case UInt8(ascii: "%"):
                let high = iterator.next().flatMap(Self.hexValue)
                let low = iterator.next().flatMap(Self.hexValue)
                if let high, let low { bytes.append(high << 4 | low) }
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
