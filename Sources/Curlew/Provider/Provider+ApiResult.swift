// Curlew — one-line typed calls: a request decoded into an ApiResult.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CurlewJSON

/// A target type whose API uses its own error-message type for every call of its providers.
public protocol ApiErrorMessageTarget: TargetType {
    /// The type non-2xx bodies decode into.
    associatedtype ErrorMessage: Decodable & Sendable
}

extension Provider {
    /// Sends the request and decodes the response by status code, with ``ApiErrorMessage`` for errors.
    ///
    /// ```swift
    /// let result = try await provider.request(.login(user, password), as: LoginResponse.self)
    /// ```
    ///
    /// - Throws: ``CurlewError`` for client-side failures: transport errors, cancellation, validation,
    ///   and a 2xx body that does not decode.
    public nonisolated func request<Value: Decodable & Sendable>(
        _ target: Target, as type: Value.Type, decoder: JSONDecoder? = nil
    ) async throws(CurlewError) -> ApiResult<Value, ApiErrorMessage> {
        try await request(target, as: type, errorMessage: ApiErrorMessage.self, decoder: decoder)
    }

    /// Sends the request and decodes the response by status code, with `errorMessage` for errors.
    ///
    /// Decoding is CPU work, so the whole call runs on the global executor (`@concurrent`), never on
    /// the caller's actor; it is inlinable so the decoding is specialised for the caller's types.
    /// Bodies decode exactly as the `JSONDecoder` (`decoder`, or the provider's) would decode them,
    /// with Curlew's faster JSON decoder whenever it can reproduce that decoder's settings.
    ///
    /// - Throws: ``CurlewError`` for client-side failures: transport errors, cancellation, validation,
    ///   and a 2xx body that does not decode.
    @concurrent @inlinable
    public nonisolated func request<Value: Decodable & Sendable, Message: Decodable & Sendable>(
        _ target: Target, as type: Value.Type, errorMessage: Message.Type, decoder: JSONDecoder? = nil
    ) async throws(CurlewError) -> ApiResult<Value, Message> {
        let response = try await request(target)
        return try ApiResult<Value, Message>.decode(
            from: response, with: decoder.map(JSONBodyDecoder.init) ?? bodyDecoder)
    }
}

extension Provider where Target: ApiErrorMessageTarget {
    /// Sends the request and decodes the response by status code, with the target's error-message type.
    ///
    /// - Throws: ``CurlewError`` for client-side failures: transport errors, cancellation, validation,
    ///   and a 2xx body that does not decode.
    public nonisolated func request<Value: Decodable & Sendable>(
        _ target: Target, as type: Value.Type, decoder: JSONDecoder? = nil
    ) async throws(CurlewError) -> ApiResult<Value, Target.ErrorMessage> {
        try await request(target, as: type, errorMessage: Target.ErrorMessage.self, decoder: decoder)
    }
}
