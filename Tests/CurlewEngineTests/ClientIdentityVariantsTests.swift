// Curlew — identities that share a certificate get certificates libcurl tells apart.

@testable import CurlewEngine
import Testing

@Suite struct ClientIdentityVariantsTests {
    static let certificate = ClientIdentity.Source.file("/etc/certs/client.pem")

    @Test func theFirstIdentityOfACertificateUsesItAsGiven() {
        var variants = ClientIdentityVariants()
        let identity = ClientIdentity(certificate: Self.certificate, privateKey: .file("/etc/certs/a.key"))
        #expect(variants.certificate(for: identity) == Self.certificate)
        #expect(variants.certificate(for: identity) == Self.certificate)
    }

    @Test func furtherIdentitiesOfTheSameCertificateGetTheirOwnSpelling() {
        var variants = ClientIdentityVariants()
        let a = ClientIdentity(certificate: Self.certificate, privateKey: .file("/etc/certs/a.key"))
        let b = ClientIdentity(certificate: Self.certificate, privateKey: .file("/etc/certs/b.key"))
        let c = ClientIdentity(certificate: Self.certificate, privateKey: .file("/etc/certs/a.key"), password: "p")
        #expect(variants.certificate(for: a) == .file("/etc/certs/client.pem"))
        #expect(variants.certificate(for: b) == .file("/etc/certs/./client.pem"))
        #expect(variants.certificate(for: c) == .file("/etc/certs/././client.pem"))
        // Each keeps its spelling, whatever came in between.
        #expect(variants.certificate(for: a) == .file("/etc/certs/client.pem"))
        #expect(variants.certificate(for: b) == .file("/etc/certs/./client.pem"))
        // Another certificate starts from its own spelling.
        let other = ClientIdentity(certificate: .file("other.pem"), privateKey: .file("/etc/certs/b.key"))
        #expect(variants.certificate(for: other) == .file("other.pem"))
    }

    @Test func relativePathsAndPEMBytesAreSpeltToo() {
        #expect(ClientIdentityVariants.spelling(of: .file("client.pem"), variant: 2) == .file("././client.pem"))
        let pem: [UInt8] = Array("-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n".utf8)
        #expect(ClientIdentityVariants.spelling(of: .pem(pem), variant: 0) == .pem(pem))
        #expect(ClientIdentityVariants.spelling(of: .pem(pem), variant: 1) == .pem(pem + [10]))
    }
}
