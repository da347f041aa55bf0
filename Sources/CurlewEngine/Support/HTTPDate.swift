// Curlew — HTTP dates (RFC 9110 §5.6.7), read for `Retry-After` and for a download's validators.

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Reads an HTTP date: IMF-fixdate, and the obsolete RFC 850 and asctime forms recipients must accept.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// An HTTP date in any of its three forms, as GMT.
    package static func parse(_ text: String, now: Date) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let year: Int
        let month: Int
        let day: Int
        let time: String
        if parts.count == 6, parts[5] == "GMT" {
            // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
            guard let d = Int(parts[1]), let m = monthNumber(parts[2]), let y = Int(parts[3]), parts[3].count == 4 else { return nil }
            (day, month, year, time) = (d, m, y, parts[4])
        } else if parts.count == 4, parts[3] == "GMT" {
            // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
            let date = parts[1].split(separator: "-").map(String.init)
            guard date.count == 3, let d = Int(date[0]), let m = monthNumber(date[1]), let y2 = Int(date[2]), date[2].count == 2
            else { return nil }
            // RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in the future is the
            // most recent past year with those digits.
            let thisYear = 1970 + Int(now.timeIntervalSince1970 / 31_556_952)
            var century = thisYear / 100 * 100
            if century + y2 > thisYear + 50 { century -= 100 }
            (day, month, year, time) = (d, m, century + y2, parts[2])
        } else if parts.count == 5 {
            // asctime: "Sun Nov  6 08:49:37 1994"
            guard let m = monthNumber(parts[1]), let d = Int(parts[2]), let y = Int(parts[4]), parts[4].count == 4 else { return nil }
            (day, month, year, time) = (d, m, y, parts[3])
        } else {
            return nil
        }
        let clock = time.split(separator: ":").map { Int($0) }
        guard clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2],
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func monthNumber(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
