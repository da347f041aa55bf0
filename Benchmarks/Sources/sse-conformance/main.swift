// sse-conformance — runs the server-sent-events parsing table (Tests/Fixtures/event-stream-cases.json)
// against the OpenAPI runtime's decoder (and says why mattt/EventSource cannot be run), and with
// --curlew against Curlew's own EventStreamParser, feeding every case whole, split in two at every byte
// boundary and one byte per chunk. Prints a Markdown table: a verdict per case and decoder, with the
// likely causes of each failure (Diagnosis.swift); --json writes the same, with each first difference.
//
// usage: sse-conformance CASES.json [--json OUT.json] [--curlew]
//   cd Benchmarks && swift run -c release sse-conformance ../Tests/Fixtures/event-stream-cases.json --curlew
import Foundation

let usage = "usage: sse-conformance CASES.json [--json OUT.json] [--curlew]\n"
var casesPath: String?
var jsonPath: String?
var includeCurlew = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--json":
        guard let path = arguments.popFirst() else { FileHandle.standardError.write(Data(usage.utf8)); exit(2) }
        jsonPath = path
    case "--curlew": includeCurlew = true
    case "-h", "--help": print(usage, terminator: ""); exit(0)
    default:
        guard casesPath == nil, !argument.hasPrefix("--") else { FileHandle.standardError.write(Data(usage.utf8)); exit(2) }
        casesPath = argument
    }
}
guard let casesPath else { FileHandle.standardError.write(Data(usage.utf8)); exit(2) }

let cases: [ConformanceCase]
do {
    cases = try JSONDecoder().decode([ConformanceCase].self, from: Data(contentsOf: URL(fileURLWithPath: casesPath)))
} catch {
    FileHandle.standardError.write(Data("sse-conformance: cannot read \(casesPath): \(error)\n".utf8))
    exit(1)
}

let columns: [Column] = [openAPIColumn, eventSourceColumn] + (includeCurlew ? [curlewColumn] : [])

struct Row: Encodable {
    var name: String
    var rule: String
    var bytes: Int
    var results: [String: Verdict]
}

var rows: [Row] = []
for testCase in cases {
    let bytes: [UInt8]
    do { bytes = try testCase.bytes() } catch {
        FileHandle.standardError.write(Data("sse-conformance: \(error)\n".utf8))
        exit(1)
    }
    var results: [String: Verdict] = [:]
    for column in columns { results[column.key] = await judge(testCase, bytes: bytes, column: column) }
    rows.append(Row(name: testCase.name, rule: testCase.rule, bytes: bytes.count, results: results))
}

func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
}

var markdown = "| case | rule | " + columns.map(\.title).joined(separator: " | ") + " |\n"
markdown += "| --- | --- |" + String(repeating: " --- |", count: columns.count) + "\n"
for row in rows {
    markdown += "| \(cell(row.name)) | \(cell(row.rule)) | "
    markdown += columns.map { cell(row.results[$0.key]?.cell ?? "") }.joined(separator: " | ") + " |\n"
}
markdown += "\n"
for column in columns {
    let verdicts = rows.compactMap { $0.results[column.key] }
    if let unavailable = column.unavailable {
        markdown += "- \(column.title): \(unavailable)\n"
    } else {
        let passed = verdicts.filter { $0.verdict == "pass" }.count
        markdown += "- \(column.title): \(passed) of \(verdicts.count) cases pass on every feed.\n"
    }
    for note in column.notes { markdown += "  - \(note)\n" }
}
markdown += "- Feeds per case: the input whole, split in two at every byte boundary, and one byte per chunk; "
markdown += "a case passes only if every feed gives the expected events, last event ID and reconnection time.\n"
print(markdown, terminator: "")

if let jsonPath {
    struct ColumnInfo: Encodable { var key: String; var title: String; var notes: [String]; var unavailable: String? }
    struct Report: Encodable { var cases: String; var columns: [ColumnInfo]; var rows: [Row] }
    let report = Report(
        cases: casesPath,
        columns: columns.map { ColumnInfo(key: $0.key, title: $0.title, notes: $0.notes, unavailable: $0.unavailable) },
        rows: rows
    )
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    do {
        try encoder.encode(report).write(to: URL(fileURLWithPath: jsonPath))
    } catch {
        FileHandle.standardError.write(Data("sse-conformance: cannot write \(jsonPath): \(error)\n".utf8))
        exit(1)
    }
}
