// Curlew — bytes read as UTF-8 text, for messages and exact comparisons.

import Foundation

extension Data {
    /// The bytes decoded as UTF-8 (invalid sequences become U+FFFD).
    package var text: String { String(decoding: self, as: UTF8.self) }
}
