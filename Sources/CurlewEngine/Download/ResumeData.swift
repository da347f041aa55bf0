// Curlew — what a kept partial download needs to continue: its file and the validator of its bytes.

import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A partial download kept for resuming: the file, how many bytes it holds, and the validator that
/// proves the server's representation has not changed since.
///
/// Found in ``TransportError/resumeData`` when a download with ``DownloadOptions/keepsPartialFile``
/// fails or is cancelled; give it back in ``DownloadOptions/resumeData``. It is `Codable`, so it can be
/// stored to resume after a restart.
public struct ResumeData: Sendable, Hashable, Codable {
    /// What tells the server which representation the partial bytes came from (RFC 9110 §13.1.5).
    public enum Validator: Sendable, Hashable, Codable {
        /// A strong entity tag, quotes included.
        case entityTag(String)
        /// A `Last-Modified` date, as the server sent it.
        case lastModified(String)

        /// The `If-Range` value.
        public var ifRangeValue: String {
            switch self {
            case .entityTag(let tag): tag
            case .lastModified(let date): date
            }
        }
    }

    /// The URL that was downloaded.
    public let url: String
    /// The partial file (beside the destination).
    public let partialFilePath: String
    /// Where the complete file was to go.
    public let destinationPath: String
    /// The bytes the partial file holds.
    public let byteCount: Int
    /// The validator sent as `If-Range`.
    public let validator: Validator

    /// A description of a partial file.
    public init(url: String, partialFilePath: String, destinationPath: String, byteCount: Int, validator: Validator) {
        self.url = url
        self.partialFilePath = partialFilePath
        self.destinationPath = destinationPath
        self.byteCount = byteCount
        self.validator = validator
    }

    /// The validator a response offers for resuming its body, or nil when it cannot be resumed: a
    /// strong `ETag` (a weak `W/` tag never validates a range), else `Last-Modified` when the response's
    /// `Date` is at least one second later (a date that close to the change may hide a second change
    /// within the same second). A body with a `Content-Encoding` cannot be resumed: ranges count encoded
    /// bytes.
    static func validator(of head: ResponseHead) -> Validator? {
        let fields = head.headerFields
        if let encoding = fields[.contentEncoding]?.trimmingWhitespace, !encoding.isEmpty, encoding.lowercased() != "identity" {
            return nil
        }
        if let tag = fields[.eTag]?.trimmingWhitespace, !tag.isEmpty {
            // A weak tag cannot validate a range, and then neither may a date (the server said bytes may differ).
            if tag.hasPrefix("W/") { return nil }
            if tag.hasPrefix("\""), tag.hasSuffix("\""), tag.count >= 2 { return .entityTag(tag) }
            return nil
        }
        let now = Date()
        guard let modifiedText = fields[.lastModified], let modified = HTTPDate.parse(modifiedText, now: now),
            let dateText = fields[.date], let date = HTTPDate.parse(dateText, now: now),
            date.timeIntervalSince(modified) >= 1
        else { return nil }
        return .lastModified(modifiedText)
    }
}
