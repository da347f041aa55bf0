// Curlew — a complete response as the engine received it.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A complete HTTP response received by the engine.
///
/// Named `TransportResponse` so it does not clash with the `Response` types of server frameworks
/// (Vapor, Hummingbird) or with the provider-level `ApiResponse` of the Curlew module.
///
/// A value type with copy-on-write storage: copies are one reference wide, and changing a copy never
/// changes another.
public struct TransportResponse: Sendable {
    /// The status code of the final response.
    public var status: HTTPResponse.Status {
        get { storage.status }
        set { mutableStorage.status = newValue }
    }
    /// Every header field of the final response, in order; repeated fields are kept and names compare
    /// case-insensitively.
    ///
    /// For a response from the network the fields are parsed from the received head the first time
    /// they are read (on the reader's thread, once); a response whose fields are never read never pays
    /// for them.
    public var headerFields: HTTPFields {
        get { storage.receivedHead?.fields ?? storage.assignedFields }
        set {
            let storage = mutableStorage
            storage.assignedFields = newValue
            storage.receivedHead = nil
        }
    }
    /// The response body, decoded from its `Content-Encoding`.
    public var body: Data {
        get { storage.body }
        set { mutableStorage.body = newValue }
    }
    /// The URL the response came from.
    public var effectiveURL: String {
        get { storage.effectiveURL }
        set { mutableStorage.effectiveURL = newValue }
    }
    /// The protocol version of the response.
    public var httpVersion: ResponseHead.HTTPVersion {
        get { storage.httpVersion }
        set { mutableStorage.httpVersion = newValue }
    }
    /// Whether the request went over a connection that was already open.
    public var connectionReused: Bool {
        get { storage.connectionReused }
        set { mutableStorage.connectionReused = newValue }
    }
    /// When each phase of the transfer completed.
    public var timings: TransferTimings {
        get { storage.timings }
        set { mutableStorage.timings = newValue }
    }
    /// The redirects followed before this response, in order (each URL requested and the 3xx status
    /// it answered with); empty when there was none. ``effectiveURL`` is the final URL.
    public var redirects: [RedirectStep] {
        get { storage.redirects }
        set { mutableStorage.redirects = newValue }
    }
    /// For a redirect response: its `Location`, resolved against the URL requested; nil otherwise, or
    /// when the response carries no `Location`.
    public var redirectURL: String? {
        get { storage.redirectURL }
        set { mutableStorage.redirectURL = newValue }
    }
    /// The trailer fields that followed the body (HTTP/1.1 chunked, HTTP/2), or nil when none came.
    public var trailerFields: HTTPFields? {
        get { storage.trailerFields }
        set { mutableStorage.trailerFields = newValue }
    }
    /// Whether the head carried a `Location` field (with or without a usable value).
    var hasLocation: Bool { storage.hasLocation }
    /// The head as received, whose fields are parsed when first read; nil for a response built by hand.
    var receivedHead: ReceivedHead? { storage.receivedHead }
    /// The fields set by hand (meaningful only when ``receivedHead`` is nil).
    var assignedFields: HTTPFields { storage.assignedFields }

    private var storage: Storage

    /// Creates a response from its parts.
    public init(
        status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: Data = Data(),
        effectiveURL: String = "", httpVersion: ResponseHead.HTTPVersion = .none, connectionReused: Bool = false,
        timings: TransferTimings = .zero
    ) {
        storage = Storage(
            status: status, assignedFields: headerFields, receivedHead: nil, body: body, effectiveURL: effectiveURL,
            httpVersion: httpVersion, connectionReused: connectionReused, timings: timings)
    }

    /// A response from the network, whose fields stay unparsed until read.
    init(
        status: HTTPResponse.Status, head: ReceivedHead, body: Data, effectiveURL: String, httpVersion: ResponseHead.HTTPVersion,
        connectionReused: Bool, timings: TransferTimings, redirectURL: String?, hasLocation: Bool
    ) {
        storage = Storage(
            status: status, assignedFields: HTTPFields(), receivedHead: head, body: body, effectiveURL: effectiveURL,
            httpVersion: httpVersion, connectionReused: connectionReused, timings: timings)
        storage.redirectURL = redirectURL
        storage.hasLocation = hasLocation
    }

    /// The storage, copied first when another value shares it.
    private var mutableStorage: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    // @unchecked Sendable: mutated only through `mutableStorage`, i.e. only while uniquely referenced by
    // the one `TransportResponse` value doing the mutation; an instance two values share is never written.
    private final class Storage: @unchecked Sendable {
        var status: HTTPResponse.Status
        var assignedFields: HTTPFields
        var receivedHead: ReceivedHead?
        var body: Data
        var effectiveURL: String
        var httpVersion: ResponseHead.HTTPVersion
        var connectionReused: Bool
        var timings: TransferTimings
        var redirects: [RedirectStep] = []
        var redirectURL: String?
        var hasLocation = false
        var trailerFields: HTTPFields?

        init(
            status: HTTPResponse.Status, assignedFields: HTTPFields, receivedHead: ReceivedHead?, body: Data,
            effectiveURL: String, httpVersion: ResponseHead.HTTPVersion, connectionReused: Bool, timings: TransferTimings
        ) {
            self.status = status
            self.assignedFields = assignedFields
            self.receivedHead = receivedHead
            self.body = body
            self.effectiveURL = effectiveURL
            self.httpVersion = httpVersion
            self.connectionReused = connectionReused
            self.timings = timings
        }

        func copy() -> Storage {
            let copy = Storage(
                status: status, assignedFields: assignedFields, receivedHead: receivedHead, body: body,
                effectiveURL: effectiveURL, httpVersion: httpVersion, connectionReused: connectionReused,
                timings: timings)
            copy.redirects = redirects
            copy.redirectURL = redirectURL
            copy.hasLocation = hasLocation
            copy.trailerFields = trailerFields
            return copy
        }
    }
}
