// Curlew — field values without their surrounding spaces and tabs (RFC 9110 §5.5's optional whitespace).

extension String {
    /// The string without leading and trailing spaces and tabs.
    package var trimmingWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
