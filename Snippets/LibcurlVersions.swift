// Supported libcurl versions: which libcurl a process runs on, which system trust store its sessions
// use, and the typed refusal of a libcurl below Curlew's floor.

// snippet.hide
import Curlew
import Logging
// snippet.show

let logger = Logger(label: "startup")

// The library the dynamic linker loaded (not the headers Curlew was built against).
let library = CurlSession.libcurl
logger.info(
    "libcurl",
    metadata: [
        "version": "\(library.version)", "build": "\(library.summary)",
        "decodes": "\(library.contentCodings.joined(separator: ", "))", "http2": "\(library.supportsHTTP2)",
    ])

// Where `TrustRoots.system` comes from: SSL_CERT_FILE / SSL_CERT_DIR, else the distribution's bundle.
logger.info("system trust store", metadata: ["store": "\(CurlSession.systemTrustStore)"])

// Below `LibcurlVersion.minimumSupported` (7.81.0) no session starts, with an error naming both versions;
// a provider's default session fails every call with the same error.
func startSession() throws(TransportError) -> CurlSession {
    do {
        return try CurlSession()
    } catch {
        if error.code == .unsupportedLibcurl { logger.critical("\(error.message)") }
        throw error
    }
}
let session = try startSession()
await session.shutdown()
