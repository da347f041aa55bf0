// Curlew — what decodes JSON bodies for a caller's JSONDecoder: the tape decoder or JSONDecoder, decided once.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes JSON exactly as a given `JSONDecoder` would, with the tape decoder whenever it reproduces
/// that decoder's settings.
///
/// The choice is made once, when the body decoder is created from the `JSONDecoder`, whose settings
/// are taken then (later changes to it are not seen). Safe to share between tasks.
@usableFromInline
package struct JSONBodyDecoder: Sendable {
    /// How bodies are decoded.
    package enum Strategy: Sendable {
        /// By the tape decoder, which reproduces the settings.
        case tape(CurlewJSONDecoder)
        /// By a new `JSONDecoder` with these settings for every decode.
        case jsonDecoderPerDecode(JSONDecoderSettings)
        /// By the caller's `JSONDecoder` subclass itself, which may override `decode(_:from:)`.
        case instance(JSONDecoder)
    }

    /// How bodies are decoded.
    package let strategy: Strategy

    /// The body decoder for `decoder`: the decoder itself when it is a subclass; otherwise its
    /// settings, with the tape decoder when it reproduces them.
    @usableFromInline
    package init(_ decoder: JSONDecoder) {
        guard type(of: decoder) == JSONDecoder.self else {
            strategy = .instance(decoder)
            return
        }
        let settings = JSONDecoderSettings(of: decoder)
        if let tape = CurlewJSONDecoder(settings: settings) {
            strategy = .tape(tape)
        } else {
            strategy = .jsonDecoderPerDecode(settings)
        }
    }

    /// The body decoder of a plain `JSONDecoder()`.
    package static let standard = JSONBodyDecoder(JSONDecoder())

    /// Decodes `type` from JSON `data`, with the same result or error as the `JSONDecoder`.
    @usableFromInline
    package func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        switch strategy {
        case .tape(let decoder): try decoder.decode(type, from: data)
        case .jsonDecoderPerDecode(let settings):
            // Not one shared decoder: it takes its lock on every decode, which was contended under
            // concurrency (0.78× the throughput of a decoder per call, 64 requests in flight on 2 cores).
            try settings.makeJSONDecoder().decode(type, from: data)
        case .instance(let decoder): try decoder.decode(type, from: data)
        }
    }
}
