// Curlew — building the request an endpoint describes.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Endpoint {
    /// The request this endpoint describes.
    ///
    /// - Throws: ``CurlewError/requestMapping(_:)`` when the URL is not an absolute http(s) URL or a
    ///   header cannot be sent as given; ``CurlewError/parameterEncoding(_:)`` when parameters cannot be
    ///   encoded; ``CurlewError/encodableMapping(_:)`` when an `Encodable` body cannot be encoded.
    public func urlRequest() throws(CurlewError) -> TransportRequest {
        guard Self.isAbsoluteHTTPURL(url) else {
            throw .requestMapping(url)
        }
        var fields = HTTPFields()
        for (name, value) in (httpHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            do {
                fields.append(try HeaderValidation.field(name: name, value: value))
            } catch {
                throw .requestMapping(error.message)
            }
        }
        let request = TransportRequest(url: url, method: method, headerFields: fields)
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
            if let urlEncoding = bodyEncoding as? URLEncoding, urlEncoding.destination != .httpBody {
                throw .parameterEncoding(
                    ParameterEncodingError.unencodable("a composite request's body encoding must not write to the URL"))
            }
            let withBody = try Self.encode(request, bodyParameters, bodyEncoding)
            return try Self.encode(withBody, urlParameters, URLEncoding.queryString)
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

    /// Whether the string starts with `http://` or `https://` and has a host, as libcurl will require.
    private static func isAbsoluteHTTPURL(_ url: String) -> Bool {
        let lowered = url.prefix(8).lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = url.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            rest = url.dropFirst(7)
        } else {
            return false
        }
        guard let first = rest.first, first != "/", first != "?", first != "#" else { return false }
        return !url.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\t" })
    }
}

extension TransportRequest {
    fileprivate func withJSON(_ value: any Encodable & Sendable, encoder: JSONEncoder) throws(CurlewError) -> TransportRequest {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw .encodableMapping(error)
        }
        return withBody(data, contentType: "application/json")
    }
}
