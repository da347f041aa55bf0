// Curlew — the libcurl floor and its refusal, the quirks decided from a version (each flag on both sides
// of its boundaries), and the system trust store found from the environment and the file system. Pure:
// no transfer runs here (the suites on other libraries run the transfers: `make test-libcurl`).

@testable import CurlewEngine
import CCurlShims
import Testing

@Suite struct LibcurlVersionTests {
    @Test func versionNumbersReadAsMajorMinorPatch() {
        #expect(LibcurlVersion(number: 0x07_51_00) == LibcurlVersion(7, 81, 0))
        #expect(LibcurlVersion(number: 0x08_0E_01) == LibcurlVersion(8, 14, 1))
        #expect(LibcurlVersion(number: 0x08_0E_01).description == "8.14.1")
        #expect(LibcurlVersion(7, 88, 1) < LibcurlVersion(8, 0, 0))
        #expect(LibcurlVersion(8, 5, 0) < LibcurlVersion(8, 14, 1))
        #expect(!(LibcurlVersion(8, 14, 1) < LibcurlVersion(8, 14, 1)))
    }

    @Test func theLoadedLibraryIsSupported() {
        // The suite runs only on supported libraries (`make test-libcurl` probes the floor first).
        #expect(CurlSession.libcurl.isSupported)
        #expect(CurlSession.libcurl.version >= LibcurlVersion.minimumSupported)
        #expect(CurlSession.curlVersion.hasPrefix("libcurl/"))
        #expect(CurlSession.libcurl.contentCodings.starts(with: ["deflate", "gzip"]))
    }

    /// The library's features become the codings it decodes, in libcurl's own order.
    @Test(arguments: [
        (Int32(0), false, [String]()),
        (0, true, ["deflate", "gzip"]),
        (CURL_VERSION_BROTLI, true, ["deflate", "gzip", "br"]),
        (CURL_VERSION_BROTLI | CURL_VERSION_ZSTD, true, ["deflate", "gzip", "br", "zstd"]),
        (CURL_VERSION_ZSTD, true, ["deflate", "gzip", "zstd"]),
    ])
    func featuresGiveTheCodingsDecoded(features: Int32, zlib: Bool, codings: [String]) {
        var info = curlew_runtime_info()
        info.version_num = 0x08_05_00
        info.features = features
        info.has_libz = zlib ? 1 : 0
        let library = Libcurl(info, summary: nil)
        #expect(library.contentCodings == codings)
        #expect(library.summary == "libcurl/8.5.0")
        #expect(library.tlsLibrary == nil)
        #expect(!library.supportsHTTP2)
    }

    /// Below the floor, a typed error naming both versions; at the floor and above, none.
    @Test func belowTheFloorASessionIsRefusedNamingBothVersions() throws {
        var info = curlew_runtime_info()
        info.version_num = 0x07_3D_01
        let old = Libcurl(info, summary: "libcurl/7.61.1 OpenSSL/1.1.1k")
        #expect(!old.isSupported)
        let error = #expect(throws: TransportError.self) { try old.requireSupported() }
        #expect(error?.code == .unsupportedLibcurl)
        #expect(
            error?.message
                == "libcurl 7.61.1 is too old: Curlew needs libcurl 7.81.0 or later (loaded: libcurl/7.61.1 OpenSSL/1.1.1k). "
                + "Ubuntu 22.04, Debian 12, Amazon Linux 2023 and later ship one; see the \"Supported libcurl versions\" article")
        for number: UInt32 in [0x07_51_00, 0x07_58_01, 0x08_15_00] {
            info.version_num = number
            #expect(throws: Never.self) { try Libcurl(info, summary: nil).requireSupported() }
        }
    }
}

@Suite struct CurlQuirksTests {
    /// Each flag, on each side of each of its boundaries: (version, whether the flag is set).
    static func expect(
        _ flag: KeyPath<CurlQuirks, Bool>, _ cases: [(LibcurlVersion, Bool)], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (version, expected) in cases {
            #expect(CurlQuirks(version: version)[keyPath: flag] == expected, "\(version)", sourceLocation: sourceLocation)
        }
    }

    @Test func aPausedHTTP2StreamStallsItsConnectionBefore7_88() {
        Self.expect(\.pausedHTTP2StreamStallsConnection, [(.init(7, 81, 0), true), (.init(7, 87, 0), true), (.init(7, 88, 0), false), (.init(8, 14, 1), false)])
        Self.expect(\.streamedResponsesAvoidHTTP2, [(.init(7, 87, 0), true), (.init(7, 88, 0), false)])
    }

    @Test func aPausedHTTP2StreamLosesItsFlowControlFrom8_1To8_3() {
        Self.expect(\.pausedHTTP2StreamLosesFlowControl, [(.init(8, 0, 1), false), (.init(8, 1, 0), true), (.init(8, 3, 0), true), (.init(8, 4, 0), false)])
        Self.expect(\.streamedResponsesAvoidHTTP2, [(.init(8, 0, 1), false), (.init(8, 2, 1), true), (.init(8, 4, 0), false)])
        Self.expect(\.priorKnowledgeReusesConnections, [(.init(8, 0, 1), true), (.init(8, 2, 1), false), (.init(8, 4, 0), true)])
    }

    @Test func aPausedHTTP1SocketIsReadIn8_5Only() {
        Self.expect(\.pausedTransferSocketStaysReadable, [(.init(8, 4, 0), false), (.init(8, 5, 0), true), (.init(8, 6, 0), false)])
    }

    @Test func theResetOfAnAbortedStreamMayWaitBefore8_15() {
        Self.expect(\.abortedStreamResetIsDelayed, [
            (.init(7, 81, 0), true), (.init(7, 88, 0), true), (.init(8, 14, 1), true), (.init(8, 15, 0), false),
        ])
    }

    @Test func trailersSpoilAHandleBefore8_7() {
        Self.expect(\.trailersSpoilTheHandle, [(.init(7, 81, 0), true), (.init(8, 6, 1), true), (.init(8, 7, 0), false)])
    }

    @Test func anHTTP2UploadSpinsIn7_88Only() {
        Self.expect(\.http2UploadSpinsWithoutWindow, [(.init(7, 87, 0), false), (.init(7, 88, 1), true), (.init(8, 0, 0), false)])
    }

    @Test func http2UploadsStallIn8_4To8_6And8_10() {
        Self.expect(\.http2UploadsStall, [
            (.init(8, 3, 0), false), (.init(8, 4, 0), true), (.init(8, 5, 0), true), (.init(8, 6, 0), true), (.init(8, 7, 0), false), (.init(8, 9, 1), false),
            (.init(8, 10, 0), true), (.init(8, 10, 1), true), (.init(8, 11, 0), false),
        ])
        Self.expect(\.someTransfersAvoidHTTP2, [(.init(7, 81, 0), true), (.init(7, 88, 1), true), (.init(8, 1, 0), true), (.init(8, 4, 0), true), (.init(8, 7, 0), false)])
    }

    @Test func anUploadsEndDropsAPausedStreamsBytesBefore8_1() {
        Self.expect(\.uploadEndDropsPausedStreamData, [(.init(7, 76, 1), true), (.init(7, 88, 1), true), (.init(8, 0, 1), true), (.init(8, 1, 0), false)])
        Self.expect(\.callbackUploadsAvoidHTTP2, [
            (.init(7, 81, 0), true), (.init(7, 88, 1), true), (.init(8, 1, 0), false), (.init(8, 4, 0), true), (.init(8, 7, 0), false),
            (.init(8, 10, 0), true), (.init(8, 14, 1), false),
        ])
    }

    @Test func theFirstByteWaitsForTheBodyIn8_6() {
        Self.expect(\.firstByteWaitsForTheBody, [
            (.init(8, 5, 0), false), (.init(8, 6, 0), true), (.init(8, 6, 9), true), (.init(8, 7, 0), false), (.init(8, 14, 1), false),
        ])
    }

    @Test func anEndedStreamNeedsAnotherRunBefore8_5AndIn8_10_0() {
        Self.expect(\.endedStreamNeedsAnotherRun, [
            (.init(7, 81, 0), true), (.init(8, 4, 0), true), (.init(8, 5, 0), false), (.init(8, 9, 1), false),
            (.init(8, 10, 0), true), (.init(8, 10, 1), true), (.init(8, 11, 0), false),
        ])
    }

    @Test func anUploadAfterACompleteResponseFailsFrom8_10() {
        Self.expect(\.uploadAfterCompleteResponseFails, [(.init(8, 9, 1), false), (.init(8, 10, 0), true), (.init(8, 21, 0), true)])
    }

    @Test func connectionAgesAreWholeSecondsBefore8_15AndLifetimesHaveADefaultFrom8_17() {
        Self.expect(\.connectionAgesInWholeSeconds, [(.init(8, 14, 1), true), (.init(8, 15, 0), false)])
        Self.expect(\.connectionLifetimeHasDefault, [(.init(8, 16, 0), false), (.init(8, 17, 0), true)])
    }

    @Test func priorKnowledgeReuseBreaksIn7_88AndIsAvoidedBefore8_0() {
        Self.expect(\.priorKnowledgeReuseBreaks, [(.init(7, 87, 0), false), (.init(7, 88, 0), true), (.init(8, 0, 0), false)])
        // Before 7.88 too: a paused stream would stall the others on the shared connection.
        Self.expect(\.priorKnowledgeReusesConnections, [(.init(7, 81, 0), false), (.init(7, 88, 1), false), (.init(8, 0, 0), true)])
    }

    @Test func pausedBytesOutliveTheTransferBefore8_1() {
        Self.expect(\.pausedBytesOutliveTheTransfer, [(.init(7, 76, 1), true), (.init(8, 0, 1), true), (.init(8, 1, 0), false)])
    }

    @Test func theCookieFileListLeaksAtEachResetIn7_88Only() {
        Self.expect(\.cookieFileListLeaksOnReset, [(.init(7, 87, 0), false), (.init(7, 88, 0), true), (.init(7, 88, 1), true), (.init(8, 0, 0), false)])
    }

    /// Debian 12's 7.88.1, as CI runs it first: the quirks its fallbacks were written for.
    @Test func debian12sLibcurl() {
        let quirks = CurlQuirks(version: .init(7, 88, 1))
        #expect(quirks.abortedStreamResetIsDelayed && quirks.trailersSpoilTheHandle && quirks.http2UploadSpinsWithoutWindow)
        #expect(quirks.endedStreamNeedsAnotherRun && quirks.priorKnowledgeReuseBreaks && quirks.connectionAgesInWholeSeconds)
        #expect(!quirks.pausedHTTP2StreamStallsConnection && !quirks.pausedTransferSocketStaysReadable)
        #expect(!quirks.uploadAfterCompleteResponseFails && !quirks.connectionLifetimeHasDefault)
        #expect(!quirks.http2UploadsStall && !quirks.firstByteWaitsForTheBody)
        #expect(quirks.cookieFileListLeaksOnReset && quirks.pausedBytesOutliveTheTransfer)
        #expect(quirks.uploadEndDropsPausedStreamData && quirks.callbackUploadsAvoidHTTP2)
    }
}

@Suite struct SystemTrustStoreTests {
    static func discover(
        _ environment: [String: String], files: Set<String>, directories: Set<String>
    ) -> SystemTrustStore {
        SystemTrustStore.discover(
            environment: { environment[$0] }, isFile: { files.contains($0) }, isHashedDirectory: { directories.contains($0) })
    }

    @Test func debianAndUbuntu() {
        let store = Self.discover([:], files: ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"], directories: ["/etc/ssl/certs"])
        #expect(store == SystemTrustStore(bundle: "/etc/ssl/certs/ca-certificates.crt", directory: "/etc/ssl/certs", source: .knownLocation))
        #expect(store.description == "file /etc/ssl/certs/ca-certificates.crt, directory /etc/ssl/certs")
    }

    @Test func rhelFedoraAndAmazonLinux() {
        let store = Self.discover(
            [:], files: ["/etc/pki/tls/certs/ca-bundle.crt", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"],
            directories: ["/etc/pki/ca-trust/extracted/pem/directory-hash"])
        #expect(store.bundle == "/etc/pki/tls/certs/ca-bundle.crt")
        #expect(store.directory == "/etc/pki/ca-trust/extracted/pem/directory-hash")
        #expect(store.source == .knownLocation)
    }

    @Test func openSUSEAndAlpineWithoutCACertificates() {
        #expect(Self.discover([:], files: ["/etc/ssl/ca-bundle.pem"], directories: []).bundle == "/etc/ssl/ca-bundle.pem")
        let alpine = Self.discover([:], files: ["/etc/ssl/cert.pem"], directories: [])
        #expect(alpine.bundle == "/etc/ssl/cert.pem")
        #expect(alpine.directory == nil)
    }

    /// A directory without hashed names is skipped: OpenSSL would find nothing in it.
    @Test func onlyHashedDirectoriesCount() {
        let store = Self.discover([:], files: [], directories: [])
        #expect(store == SystemTrustStore(bundle: nil, directory: nil, source: .libcurlDefault))
        #expect(store.description == "libcurl's compiled-in default (no system store found)")
        #expect(SystemTrustStore.isHashedName(Array("a1b2c3d4.0".utf8)))
        #expect(SystemTrustStore.isHashedName(Array("0123abcd.12".utf8)))
        #expect(!SystemTrustStore.isHashedName(Array("ca-certificates.crt".utf8)))
        #expect(!SystemTrustStore.isHashedName(Array("A1B2C3D4.0".utf8)))
        #expect(!SystemTrustStore.isHashedName(Array("a1b2c3d4.".utf8)))
        #expect(!SystemTrustStore.isHashedName(Array("a1b2c3d4.0x".utf8)))
    }

    /// The variables win over the known locations and are used as given: SSL_CERT_FILE is the whole
    /// store, SSL_CERT_DIR is when the file is not named.
    @Test func theEnvironmentComesFirst() {
        let files: Set = ["/etc/ssl/certs/ca-certificates.crt"]
        let directories: Set = ["/etc/ssl/certs"]
        let file = Self.discover(["SSL_CERT_FILE": "/opt/ca.pem"], files: files, directories: directories)
        #expect(file == SystemTrustStore(bundle: "/opt/ca.pem", directory: "/etc/ssl/certs", source: .environment))
        #expect(file.description == "file /opt/ca.pem, directory /etc/ssl/certs (from SSL_CERT_FILE/SSL_CERT_DIR)")
        let both = Self.discover(["SSL_CERT_FILE": "/opt/ca.pem", "SSL_CERT_DIR": "/opt/certs"], files: files, directories: directories)
        #expect(both == SystemTrustStore(bundle: "/opt/ca.pem", directory: "/opt/certs", source: .environment))
        let directory = Self.discover(["SSL_CERT_DIR": "/opt/certs"], files: files, directories: directories)
        #expect(directory == SystemTrustStore(bundle: nil, directory: "/opt/certs", source: .environment))
        let empty = Self.discover(["SSL_CERT_FILE": "", "SSL_CERT_DIR": ""], files: files, directories: directories)
        #expect(empty.source == .knownLocation)
    }

    /// What libcurl is given for each kind of trust: the found bundle alone for the system store (its CA
    /// cache then works); nothing at all when nothing was found (libcurl's default stays).
    @Test func theSystemStoreBecomesLibcurlsOptions() {
        let found = SystemTrustStore(bundle: "/b.pem", directory: "/d", source: .knownLocation)
        let system = TLSSetup(SessionConfiguration.TLS(), store: found)
        #expect(system.caInfo == "/b.pem" && system.caPath == nil && system.caBlob == nil && !system.keepsLibcurlDefault)
        let directoryOnly = TLSSetup(SessionConfiguration.TLS(), store: SystemTrustStore(bundle: nil, directory: "/d", source: .knownLocation))
        #expect(directoryOnly.caInfo == nil && directoryOnly.caPath == "/d")
        let named = TLSSetup(SessionConfiguration.TLS(), store: SystemTrustStore(bundle: nil, directory: "/e", source: .environment))
        #expect(named.caInfo == nil && named.caPath == "/e")
        let none = TLSSetup(SessionConfiguration.TLS(), store: SystemTrustStore(bundle: nil, directory: nil, source: .libcurlDefault))
        #expect(none.keepsLibcurlDefault)
        var custom = SessionConfiguration.TLS()
        custom.trustRoots = .file("/private.pem", includingSystem: true)
        let withDirectory = TLSSetup(custom, store: found)
        #expect(withDirectory.caInfo == "/private.pem" && withDirectory.caPath == "/d" && withDirectory.caBlob == nil)
        custom.trustRoots = .directory("/mine", includingSystem: true)
        let directories = TLSSetup(custom, store: found)
        #expect(directories.caPath == "/mine:/d" && directories.caInfo == nil)
        let noSystemDirectory = TLSSetup(custom, store: SystemTrustStore(bundle: "/b.pem", directory: nil, source: .knownLocation))
        #expect(noSystemDirectory.caPath == "/mine" && noSystemDirectory.caInfo == "/b.pem")
    }
}
