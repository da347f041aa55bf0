// Curlew — building the request an endpoint describes.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Endpoint {
    /// The request this endpoint describes, checked before anything is sent.
    ///
    /// Header fields are added in ascending name order, so equal endpoints build identical requests.
    /// Names compare ignoring case; when the dictionary holds one name in two spellings, the spelling
    /// that sorts last (`content-type` after `Content-Type`) is sent, once.
    /// JSON bodies get `Content-Type: application/json` unless a header field already sets a type.
    ///
    /// - Returns: The request for the transport.
    /// - Throws: ``CurlewError/requestMapping(_:)`` with the URL when it is not an absolute http(s) URL
    ///   with a host and without spaces or control characters, or with the reason when a header name
    ///   is not an HTTP token or a value holds CR, LF or NUL; ``CurlewError/parameterEncoding(_:)``
    ///   when parameters cannot be encoded; ``CurlewError/encodableMapping(_:)`` when an `Encodable`
    ///   body cannot be encoded; ``CurlewError/multipartEncoding(_:)`` when a multipart form cannot be
    ///   built; ``CurlewError/transport(_:)`` with ``/CurlewEngine/TransportError/Code/invalidBody`` when the
    ///   file of ``RequestTask/uploadFile(_:)`` cannot be read.
    public func urlRequest() throws(CurlewError) -> TransportRequest {
        // Checked once per URL: the endpoints of one target share theirs (see `EndpointURLCache`).
        if !EndpointURLCache.isKnownSendable(url) {
            guard Self.isSendableURL(url) else { throw .requestMapping(url) }
            EndpointURLCache.keep(sendable: url)
        }
        let fields = try Self.fields(httpHeaderFields)
        // The common request built where it is returned: a request changed after it is made, or returned
        // from a switch, is copied on its way out.
        if taskShape == .plain, transferOptions.isEmpty, redirectPolicy == nil {
            return TransportRequest(url: url, method: method, headerFields: fields)
        }
        var request = TransportRequest(url: url, method: method, headerFields: fields)
        request.options = transferOptions
        request.redirectPolicy = redirectPolicy
        return try Self.adding(task, to: request)
    }

    /// The header fields of `headers`, checked, in ascending name order.
    private static func fields(_ headers: [String: String]?) throws(CurlewError) -> HTTPFields {
        var fields = HTTPFields()
        guard let headers, !headers.isEmpty else { return fields }
        do {
            // A single field needs no sorting, which would allocate an array.
            if headers.count == 1, let (name, value) = headers.first {
                fields.append(try HeaderValidation.field(name: name, value: value))
                return fields
            }
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
                let field = try HeaderValidation.field(name: name, value: value)
                // One field per name, ignoring case: a dictionary holding two spellings sends the later one.
                if fields[field.name] != nil { fields[field.name] = nil }
                fields.append(field)
            }
        } catch {
            throw .requestMapping(error.message)
        }
        return fields
    }

    /// `request` with what `task` sends.
    private static func adding(_ task: RequestTask, to request: TransportRequest) throws(CurlewError) -> TransportRequest {
        var request = request
        switch task {
        case .requestPlain:
            return request
        case .requestData(let data):
            return request.withBody(data, contentType: nil)
        case .requestJSONEncodable(let value):
            // Sorted keys make equal values produce equal bodies (stable signatures, in-flight sharing).
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try request.withJSON(value, encoder: encoder)
        case .requestCustomJSONEncodable(let value, let encoder):
            return try request.withJSON(value, encoder: encoder)
        case .requestParameters(let parameters, let encoding):
            return try Self.encode(request, parameters, encoding)
        case .requestCompositeData(let bodyData, let urlParameters):
            let withQuery = try Self.encode(request, urlParameters, URLEncoding.queryString)
            return withQuery.withBody(bodyData, contentType: nil)
        case .requestCompositeParameters(let bodyParameters, let bodyEncoding, let urlParameters):
            // Moya stops the process here; a thrown error lets the caller see it and nothing is sent.
            if let urlEncoding = bodyEncoding as? URLEncoding, urlEncoding.destination != .httpBody {
                throw .parameterEncoding(
                    ParameterEncodingError.unencodable(
                        "a composite request's body encoding must write the body: use URLEncoding.httpBody"))
            }
            let withBody = try Self.encode(request, bodyParameters, bodyEncoding)
            return try Self.encode(withBody, urlParameters, URLEncoding.queryString)
        case .uploadFile(let file):
            guard file.isFileURL else { throw .requestMapping("uploadFile needs a file URL, not \(file.absoluteString)") }
            do {
                request.body = try TransportRequest.Body.file(file.path(percentEncoded: false))
            } catch {
                throw .transport(error)
            }
            return request
        case .uploadMultipart(let form):
            return try request.withMultipart(form)
        case .uploadCompositeMultipart(let form, let urlParameters):
            return try Self.encode(request, urlParameters, URLEncoding.queryString).withMultipart(form)
        case .downloadDestination:
            return request
        case .downloadParameters(let parameters, let encoding, _):
            return try Self.encode(request, parameters, encoding)
        }
    }

    private static func encode(
        _ request: TransportRequest, _ parameters: [String: JSONValue], _ encoding: any ParameterEncoding
    ) throws(CurlewError) -> TransportRequest {
        do {
            return try encoding.encode(request, with: parameters)
        } catch {
            throw .parameterEncoding(error)
        }
    }

    /// Whether the URL is `http://` or `https://` (any case) with a host, and free of spaces and control
    /// characters, which libcurl's parser would refuse later with a less helpful error.
    private static func isSendableURL(_ url: String) -> Bool {
        var url = url
        // Contiguous bytes: iterating the UTF-8 view costs several times more per byte.
        return url.withUTF8 { bytes in
            let hostStart: Int
            if ASCIICase.hasPrefix(UnsafeRawBufferPointer(bytes), "https://") {
                hostStart = 8
            } else if ASCIICase.hasPrefix(UnsafeRawBufferPointer(bytes), "http://") {
                hostStart = 7
            } else {
                return false
            }
            // A host must follow the "//", and no spaces or control characters anywhere.
            guard hostStart < bytes.count else { return false }
            let first = bytes[hostStart]
            guard first != UInt8(ascii: "/"), first != UInt8(ascii: "?"), first != UInt8(ascii: "#") else { return false }
            return !bytes.contains { $0 <= 0x20 || $0 == 0x7F }
        }
    }
}

extension TransportRequest {
    /// A copy with `form` as its multipart body and `Content-Type` (replacing any other: only Curlew knows
    /// the boundary). A random boundary that happens to occur in a part is drawn again.
    fileprivate func withMultipart(_ form: MultipartFormData) throws(CurlewError) -> TransportRequest {
        guard method.supportsMultipart else { throw .multipartEncoding(.methodNotSupported(method.rawValue)) }
        var draws = 0
        while true {
            do throws(MultipartEncodingError) {
                let (body, contentType) = try form.encoded(boundary: form.boundary ?? MultipartFormData.randomBoundary())
                var copy = self
                copy.body = body
                copy.headerFields[.contentType] = contentType
                return copy
            } catch .boundaryInPart where form.boundary == nil && draws < 3 {
                // 128 random bits found in a part's bytes: a part crafted to hold a boundary seen before.
                draws += 1
            } catch {
                throw .multipartEncoding(error)
            }
        }
    }

    /// A copy with `value` encoded as its JSON body.
    fileprivate func withJSON(
        _ value: any Encodable & Sendable, encoder: JSONEncoder
    ) throws(CurlewError) -> TransportRequest {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw .encodableMapping(error)
        }
        return withBody(data, contentType: "application/json")
    }
}
