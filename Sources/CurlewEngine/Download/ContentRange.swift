// Curlew — a 206's or 416's `Content-Range` (RFC 9110 §14.4), as a resumed download reads it.

/// `bytes first-last/complete`, or `bytes */complete` for an unsatisfiable range.
struct ContentRange: Equatable {
    /// The first and last byte positions sent; nil for `*`.
    let range: ClosedRange<Int>?
    /// The representation's full length; nil for `*`.
    let completeLength: Int?

    init?(_ text: String?) {
        guard let text else { return nil }
        let trimmed = text.drop { $0 == " " }
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).drop { $0 == " " }
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let lengthText = halves[1].trimmingSuffixSpaces
        if lengthText == "*" {
            completeLength = nil
        } else if let length = Int(lengthText), length >= 0 {
            completeLength = length
        } else {
            return nil
        }
        if halves[0] == "*" {
            guard completeLength != nil else { return nil }
            range = nil
        } else {
            let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first >= 0, first <= last
            else { return nil }
            if let completeLength, last >= completeLength { return nil }
            range = first...last
        }
    }
}

extension Substring {
    fileprivate var trimmingSuffixSpaces: Substring {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == " " { end = index(before: end) }
        return self[..<end]
    }
}
