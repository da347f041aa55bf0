// Responses: filter by status code, map JSON, strings and Decodable values at key paths.

// snippet.hide
import Curlew
import Foundation
// snippet.show

struct User: Decodable {
    let id: Int
    let name: String
    let joined: Date
}

let response = ApiResponse(
    statusCode: 200,
    data: Data(#"{"users":[{"id":1,"name":"Ada","joined":1700000000}],"meta":{"count":1,"next":null}}"#.utf8))

let decoder = JSONDecoder()
decoder.dateDecodingStrategy = .secondsSince1970
let users = try response.filterSuccessfulStatusCodes().map([User].self, atKeyPath: "users", using: decoder)
let count = try response.map(Int.self, atKeyPath: "meta.count")
let firstName = try response.mapString(atKeyPath: "users.0.name")
let json = try response.mapJSON()

print(users.map(\.name), count, firstName, json["meta"]?["next"] == .null)

do {
    _ = try ApiResponse(statusCode: 404, data: Data()).filterSuccessfulStatusCodes()
} catch {
    print("filtered out: \(error)")
}
