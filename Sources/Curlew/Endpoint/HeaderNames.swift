// Curlew — header-name rules for the string dictionaries of targets and endpoints.

/// Header names compare ignoring the case of letters (RFC 9110); the `[String: String]` dictionaries
/// Moya's API uses do not, so merges go through here.
enum HeaderNames {
    /// `base` with `new` merged in: a new field replaces every existing one whose name matches it
    /// ignoring case.
    static func merging(_ base: [String: String], _ new: [String: String]) -> [String: String] {
        var merged = base
        for name in new.keys {
            let lowercased = name.lowercased()
            for existing in merged.keys where existing != name && existing.lowercased() == lowercased {
                merged[existing] = nil
            }
        }
        merged.merge(new) { _, new in new }
        return merged
    }
}
