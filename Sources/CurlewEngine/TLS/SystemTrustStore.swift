// Curlew — where the system's trusted certificate authorities are, found by Curlew rather than taken
// from the path compiled into libcurl (which names another distribution's layout when the library was
// built elsewhere).

#if canImport(Glibc)
import Glibc
#endif

/// The system's trusted certificate authorities, as sessions find them: `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` first, then the locations Linux distributions use (as Go's `crypto/x509` and
/// rustls-native-certs look).
///
/// Found once per process. ``TrustRoots/system`` trusts these; ``CurlSession/systemTrustStore`` says
/// which were found.
public struct SystemTrustStore: Sendable, Hashable, CustomStringConvertible {
    /// How the store was found.
    public enum Source: String, Sendable, Hashable {
        /// `SSL_CERT_FILE` or `SSL_CERT_DIR` named it.
        case environment
        /// It is at a location a distribution uses.
        case knownLocation
        /// Nothing was found: libcurl's compiled-in default is left in force.
        case libcurlDefault
    }

    /// A PEM file holding every trusted certificate, when one was found.
    public let bundle: String?
    /// A directory of certificates named by their hashes (`openssl rehash`), when one was found.
    public let directory: String?
    /// How they were found.
    public let source: Source

    /// The store this process uses, found on first use.
    public static let current = discover(
        environment: { name in getenv(name).map { String(cString: $0) } },
        isFile: isReadableFile, isHashedDirectory: isHashedDirectory)

    /// PEM bundles, in the order they are tried.
    static let knownBundles = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Alpine (ca-certificates), Gentoo, Arch
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL, Amazon Linux
        "/etc/ssl/ca-bundle.pem",  // openSUSE, SLES
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL and CentOS 7 and later
        "/etc/pki/tls/cacert.pem",  // OpenELEC
        "/etc/ssl/cert.pem",  // Alpine without ca-certificates, macOS
    ]

    /// Hashed certificate directories, in the order they are tried; one without hashed names is skipped
    /// (OpenSSL finds nothing in it).
    static let knownDirectories = [
        "/etc/ssl/certs",  // Debian, Ubuntu, Alpine, openSUSE, Arch
        "/etc/pki/ca-trust/extracted/pem/directory-hash",  // Fedora, RHEL 9 and later
        "/etc/pki/tls/certs",  // older Fedora and RHEL
    ]

    /// Finds the store from the environment and the file system given.
    ///
    /// `SSL_CERT_FILE`, when set, is the whole store (by convention it lists every trusted certificate);
    /// otherwise `SSL_CERT_DIR`, when set; otherwise the first known bundle, else the first known hashed
    /// directory. A variable is used as given, even when what it names is missing: the TLS failure then
    /// says so, instead of another store being trusted silently. The directory (named, or found) is also
    /// what custom roots are combined with when they include the system's.
    static func discover(
        environment: (String) -> String?, isFile: (String) -> Bool, isHashedDirectory: (String) -> Bool
    ) -> SystemTrustStore {
        let fileVariable = environment("SSL_CERT_FILE").flatMap { $0.isEmpty ? nil : $0 }
        let directoryVariable = environment("SSL_CERT_DIR").flatMap { $0.isEmpty ? nil : $0 }
        let directory = directoryVariable ?? knownDirectories.first(where: isHashedDirectory)
        if let fileVariable {
            return SystemTrustStore(bundle: fileVariable, directory: directory, source: .environment)
        }
        if let directoryVariable {
            return SystemTrustStore(bundle: nil, directory: directoryVariable, source: .environment)
        }
        let bundle = knownBundles.first(where: isFile)
        return SystemTrustStore(
            bundle: bundle, directory: directory,
            source: bundle != nil || directory != nil ? .knownLocation : .libcurlDefault)
    }

    init(bundle: String?, directory: String?, source: Source) {
        self.bundle = bundle
        self.directory = directory
        self.source = source
    }

    /// The file, the directory and how they were found.
    public var description: String {
        switch source {
        case .libcurlDefault: return "libcurl's compiled-in default (no system store found)"
        case .environment, .knownLocation:
            let places = [bundle.map { "file \($0)" }, directory.map { "directory \($0)" }].compactMap { $0 }
            return places.joined(separator: ", ") + (source == .environment ? " (from SSL_CERT_FILE/SSL_CERT_DIR)" : "")
        }
    }

    private static func isReadableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, R_OK) == 0
    }

    /// Whether `path` is a directory with at least one entry named as `openssl rehash` names them
    /// (eight hex digits, a dot, a number).
    private static func isHashedDirectory(_ path: String) -> Bool {
        guard let directory = opendir(path) else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let matches = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                isHashedName(raw.prefix { $0 != 0 })
            }
            if matches { return true }
        }
        return false
    }

    /// `XXXXXXXX.N`: eight hex digits, a dot and one or more digits.
    static func isHashedName(_ name: some Collection<UInt8>) -> Bool {
        guard name.count >= 10 else { return false }
        var index = 0
        for byte in name {
            defer { index += 1 }
            switch index {
            case 0..<8:
                let hex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                if !hex { return false }
            case 8:
                if byte != UInt8(ascii: ".") { return false }
            default:
                if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { return false }
            }
        }
        return true
    }
}
