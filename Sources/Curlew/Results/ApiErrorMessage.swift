// Curlew — the default shape of an API's error body.

/// The default error-message body: `{"error_message": "..."}`. Any `Decodable` type can take its place.
public struct ApiErrorMessage: Codable, Sendable, Hashable {
    /// The API's explanation.
    public var errorMessage: String

    /// Creates a message.
    public init(errorMessage: String) {
        self.errorMessage = errorMessage
    }

    enum CodingKeys: String, CodingKey {
        case errorMessage = "error_message"
    }

    /// The key as a decoder converting snake case (`.convertFromSnakeCase`) presents `error_message`.
    private enum ConvertedKeys: String, CodingKey {
        case errorMessage
    }

    /// Decodes `{"error_message": "..."}` whatever the decoder's key strategy: with `.convertFromSnakeCase`
    /// the key arrives as `errorMessage`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.errorMessage) {
            errorMessage = try container.decode(String.self, forKey: .errorMessage)
            return
        }
        errorMessage = try decoder.container(keyedBy: ConvertedKeys.self).decode(String.self, forKey: .errorMessage)
    }
}

/// A success type for responses without a body (for example `204 No Content`): decodes from anything.
public struct EmptyBody: Decodable, Sendable, Hashable {
    /// Creates an empty body.
    public init() {}

    public init(from decoder: any Decoder) throws {}
}
