// Curlew — the libcurl the process loaded: its version, what it was built with, and the floor below
// which no session starts.

import CCurl
import CCurlShims

/// A libcurl version: major, minor and patch.
public struct LibcurlVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let major: Int
    public let minor: Int
    public let patch: Int

    /// The oldest libcurl Curlew runs on: 7.81.0, Ubuntu 22.04's. Below it ``CurlSession/init(configuration:logger:)``
    /// throws ``TransportError/Code/unsupportedLibcurl``.
    public static let minimumSupported = LibcurlVersion(7, 81, 0)

    /// A version from its three numbers.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// A version from libcurl's `0xXXYYZZ` number.
    init(number: UInt32) {
        self.init(Int(number >> 16), Int((number >> 8) & 0xFF), Int(number & 0xFF))
    }

    public static func < (lhs: LibcurlVersion, rhs: LibcurlVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// This version with its patch number 0: the release its patches fix.
    var minorRelease: LibcurlVersion { LibcurlVersion(major, minor, 0) }

    /// `major.minor.patch`.
    public var description: String { "\(major).\(minor).\(patch)" }
}

/// The libcurl library the process loaded, as it describes itself: its version and the features
/// Curlew's behaviour depends on.
///
/// Curlew compiles against the libcurl headers on the build machine and runs on whatever
/// `libcurl.so.4` the dynamic linker finds, which may be older or newer; everything version-dependent
/// is decided from this value, read once.
public struct Libcurl: Sendable, Hashable {
    /// The library's version.
    public let version: LibcurlVersion
    /// The library's own summary, e.g. `libcurl/8.5.0 OpenSSL/3.0.13 zlib/1.3 brotli/1.1.0 zstd/1.5.5`.
    public let summary: String
    /// The TLS library it uses, e.g. `OpenSSL/3.0.13`, when it has one.
    public let tlsLibrary: String?
    /// Whether it speaks HTTP/2.
    public let supportsHTTP2: Bool
    /// The content codings it decodes, in the order its `Accept-Encoding` lists them (`deflate`, `gzip`,
    /// `br`, `zstd`, as built).
    public let contentCodings: [String]

    /// Whether Curlew runs on this library: its version is at least ``LibcurlVersion/minimumSupported``.
    public var isSupported: Bool { version >= .minimumSupported }

    /// The library this process loaded, read once.
    public static let loaded = Libcurl(curlew_runtime(), summary: curl_version().map { String(cString: $0) })

    init(_ info: curlew_runtime_info, summary: String?) {
        version = LibcurlVersion(number: info.version_num)
        self.summary = summary ?? "libcurl/\(version)"
        tlsLibrary = info.ssl_version.map { String(cString: $0) }
        supportsHTTP2 = info.features & CURL_VERSION_HTTP2 != 0
        var codings: [String] = []
        if info.has_libz != 0 { codings += ["deflate", "gzip"] }
        if info.features & CURL_VERSION_BROTLI != 0 { codings.append("br") }
        if info.features & CURL_VERSION_ZSTD != 0 { codings.append("zstd") }
        contentCodings = codings
    }

    /// Throws ``TransportError/Code/unsupportedLibcurl`` when the library is below the floor. Runs before
    /// anything else touches libcurl: a library below the floor lacks functions Curlew calls, and calling
    /// one would end the process instead of failing.
    func requireSupported() throws(TransportError) {
        guard !isSupported else { return }
        throw TransportError(
            .unsupportedLibcurl,
            message: "libcurl \(version) is too old: Curlew needs libcurl \(LibcurlVersion.minimumSupported) or later "
                + "(loaded: \(summary)). Ubuntu 22.04, Debian 12, Amazon Linux 2023 and later ship one; "
                + "see the \"Supported libcurl versions\" article")
    }
}
