// Curlew — what fuzzing the multipart encoder against multipart-kit's parser found (Fuzz/Sources/
// FuzzMultipart; input kept as Fuzz/Corpus/FuzzMultipart/mime-spaces-only): a MIME type of spaces only
// was sent as a `Content-Type` that every reader takes as empty, the type the encoder refuses.

import Curlew
import Foundation
import Testing

/// The error `form.encoded(boundary:)` throws; records an issue when it does not.
private func refusal(_ form: MultipartFormData, sourceLocation: SourceLocation = #_sourceLocation) -> MultipartEncodingError? {
    do {
        let encoded = try form.encoded(boundary: "b")
        Issue.record("expected the form to be refused, got a body of \(encoded.body)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

@Suite struct MultipartFuzzFindingsTests {
    /// A reader drops the whitespace around a field value (RFC 9110 §5.5; multipart-kit and python-multipart
    /// both do): `Content-Type:  ` followed by spaces is an empty type, which a form must not send. Spaces
    /// alone are refused as the empty type is, for data, stream and file parts.
    @Test(arguments: [" ", "   "])
    func aMimeTypeOfSpacesOnlyIsRefused(_ mimeType: String) async throws {
        let data = MultipartFormData(parts: [MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "d", mimeType: mimeType)])
        #expect(refusal(data) == .invalidMimeType(name: "d", mimeType))
        let stream = FormDataStream(length: 1, replayable: true) { writer in try await writer.write(Data("v".utf8)) }
        let streamed = MultipartFormData(parts: [MultipartFormBodyPart(provider: .stream(stream), name: "s", mimeType: mimeType)])
        #expect(refusal(streamed) == .invalidMimeType(name: "s", mimeType))
        try await withMultipartDirectory { directory in
            let file = try writeMultipartFile(Array("v".utf8), "v.txt", in: directory)
            let form = MultipartFormData(parts: [MultipartFormBodyPart(provider: .file(file), name: "f", mimeType: mimeType)])
            #expect(refusal(form) == .invalidMimeType(name: "f", mimeType))
        }
    }

    /// A type with spaces around it is still sent as given: a reader gets the type without them.
    @Test func aMimeTypeWithSpacesAroundItIsSentAsGiven() throws {
        let form = MultipartFormData(parts: [
            MultipartFormBodyPart(provider: .data(Data("v".utf8)), name: "d", mimeType: " text/plain ")
        ])
        let (body, contentType) = try form.encoded(boundary: "b")
        #expect(contentType == "multipart/form-data; boundary=b")
        let expected = Data(
            ("--b\r\n" + "Content-Disposition: form-data; name=\"d\"\r\n" + "Content-Type:  text/plain \r\n" + "\r\n" + "v\r\n"
                + "--b--\r\n").utf8)
        #expect(body.inMemoryBytes == expected)
    }
}
