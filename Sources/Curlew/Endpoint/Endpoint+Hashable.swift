// Curlew — endpoints compare by the request they build.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Endpoint: Equatable, Hashable {
    /// Whether two endpoints build the same request: URL, method, header fields, transfer options and
    /// body. A JSON body compares by content, whatever order its encoder wrote the keys in.
    ///
    /// As in Moya, an upload compares what it uploads: the file URL of ``RequestTask/uploadFile(_:)``, the
    /// ``MultipartFormData`` of a multipart task (its parts and fixed boundary; a random boundary is drawn
    /// per request and not compared). A download compares its request, not its destination closure; it
    /// never equals an endpoint that does not download.
    ///
    /// Closures cannot be compared, so the sample response and a custom redirect policy are ignored. Two
    /// endpoints that both fail to build compare their URL, method and header fields; one that builds
    /// never equals one that fails.
    public static func == (lhs: Endpoint, rhs: Endpoint) -> Bool {
        guard TaskIdentity(lhs.task) == TaskIdentity(rhs.task) else { return false }
        switch (lhs.comparableRequest, rhs.comparableRequest) {
        case (let left?, let right?):
            return RequestIdentity(left) == RequestIdentity(right)
        case (nil, nil):
            return lhs.url == rhs.url && lhs.method == rhs.method && lhs.httpHeaderFields == rhs.httpHeaderFields
        default:
            return false
        }
    }

    /// Hashes what `==` compares: the built request, or URL, method and header fields when it fails.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(TaskIdentity(task))
        if let request = comparableRequest {
            hasher.combine(true)
            hasher.combine(RequestIdentity(request))
        } else {
            hasher.combine(false)
            hasher.combine(url)
            hasher.combine(method)
            hasher.combine(httpHeaderFields)
        }
    }

    /// The request without what an upload uploads, which ``TaskIdentity`` compares: built without opening
    /// or measuring the files (a file that appears or goes away never changes an endpoint's hash) and
    /// without drawing a multipart boundary.
    private var comparableRequest: TransportRequest? {
        switch task {
        case .uploadFile:
            return try? replacing(task: .requestPlain).urlRequest()
        case .uploadMultipart:
            guard var request = try? replacing(task: .requestPlain).urlRequest() else { return nil }
            request.headerFields[.contentType] = nil
            return request
        case .uploadCompositeMultipart(_, let urlParameters):
            let query = RequestTask.requestParameters(parameters: urlParameters, encoding: URLEncoding.queryString)
            guard var request = try? replacing(task: query).urlRequest() else { return nil }
            request.headerFields[.contentType] = nil
            return request
        default:
            return try? urlRequest()
        }
    }
}

/// What a task uploads or whether it downloads, beyond the request it builds.
private enum TaskIdentity: Hashable {
    case request
    case file(URL)
    case multipart(MultipartFormData)
    case download

    init(_ task: RequestTask) {
        switch task {
        case .uploadFile(let file): self = .file(file)
        case .uploadMultipart(let form), .uploadCompositeMultipart(let form, _): self = .multipart(form)
        case .downloadDestination, .downloadParameters: self = .download
        default: self = .request
        }
    }
}
