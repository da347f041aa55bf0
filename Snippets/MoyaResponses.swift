// Moya's "Responses" page in Curlew: handling a call's outcome, the response's properties, status-code
// filters, JSON and Decodable mapping at key paths with a custom decoder, and failsOnEmptyData.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
// snippet.show

// snippet.user-json
// GET /users/jp answers:
let jamesJSON = #"{"id": "jp", "firstName": "James", "lastName": "Potter"}"#
// snippet.end

// snippet.users-json
// GET /users answers (`updated` is a Unix timestamp):
let usersJSON = #"""
    {
      "users": [
        {"id": "jp", "firstName": "James", "lastName": "Potter", "updated": 1507709925},
        {"id": "lp", "firstName": "Lily", "lastName": "Potter", "updated": 1507709926}
      ]
    }
    """#
// snippet.end

// snippet.empty-users-json
// GET /newcomers answers:
let newcomersJSON = #"{"users": []}"#
// snippet.end

// snippet.hide
let server = try await LocalHTTPServer.start { request in
    switch request.path {
    case "/zen": .text("Half measures are as bad as nothing at all.")
    case "/users/jp": .json(jamesJSON)
    case "/users": .json(usersJSON)
    case "/newcomers": .json(newcomersJSON)
    case "/archived": .respond(status: 200)  // no body at all
    default: .json(#"{"error_message":"not found"}"#, status: 404)
    }
}

enum MyService: TargetType {
    case zen
    case user(String)
    case users
    case newcomers
    case archived

    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String {
        switch self {
        case .zen: "/zen"
        case .user(let id): "/users/\(id)"
        case .users: "/users"
        case .newcomers: "/newcomers"
        case .archived: "/archived"
        }
    }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

let provider = Provider<MyService>(endpointClosure: server.endpointMapping())
// snippet.show

// snippet.result
switch await provider.result(for: .zen) {
case .success(let response):
    let data = response.data  // your JSON is probably in here
    let statusCode = response.statusCode  // 200, 401, 500...
    print("do something with \(data.count) bytes, status \(statusCode)")
case .failure(let error):
    print("handle \(error)")
}
// snippet.end

// snippet.result-type
// result(for:) returns Swift's Result, whose failure is typed; get() turns it back into a throw.
let result: Result<ApiResponse, CurlewError> = await provider.result(for: .zen)
let zenResponse = try result.get()
precondition(zenResponse.statusCode == 200)
// snippet.end

// snippet.do-catch
do {
    let response = try await provider.request(.zen)
    print(response.statusCode, String(decoding: response.data, as: UTF8.self))
} catch {
    // `error` is a CurlewError (typed throws): no cast needed.
    print("failed: \(error), cancelled: \(error.isCancellation)")
}
// snippet.end

// snippet.properties
let zen = try await provider.request(.zen)
let data: Data = zen.data  // the body
let statusCode: Int = zen.statusCode  // 200, 401, 500...
let sent: TransportRequest? = zen.request  // the request that produced it
let raw: TransportResponse? = zen.transportResponse  // what the engine received: head, timings, HTTP version
print(zen.description)  // Status Code: 200, Data Length: 43
print(zen.debugDescription)  // ... Request: GET http://127.0.0.1:.../zen, Headers: [...]
print(zen.headerFields[.contentType] ?? "", raw.map { "\($0.httpVersion)" } ?? "stubbed", sent?.url ?? "")
// Equal when status code, body and header fields are equal (the request and timings are not compared).
let again = try await provider.request(.zen)
precondition(zen == again && statusCode == 200 && !data.isEmpty)
// snippet.end

// snippet.filter
do {
    let filtered = try await provider.request(.user("nobody")).filterSuccessfulStatusCodes()
    print("200-299: \(filtered.statusCode)")
} catch .statusCode(let response) {
    // The refused response is in the error.
    print("refused: \(response.statusCode)")
} catch {
    print("the request failed: \(error)")
}
// snippet.end

// snippet.filter-range
let inRange = try await provider.request(.zen).filter(statusCodes: 200...299)  // same as filterSuccessfulStatusCodes()
let exactly = try await provider.request(.zen).filter(statusCode: 200)
let orRedirect = try await provider.request(.zen).filterSuccessfulStatusAndRedirectCodes()  // 200-399
precondition(inRange == exactly && exactly == orRedirect)
// snippet.end

// snippet.filter-chain
// One expression, one place to handle every error: the transport's, the filter's.
do {
    let response = try await provider.request(.zen).filterSuccessfulStatusCodes()
    print("do something with \(response.data.count) bytes")
} catch {
    print("an underlying or a status code error: \(error)")
}
// snippet.end

// snippet.map-json
do {
    let response = try await provider.request(.user("jp"))
    let filtered = try response.filterSuccessfulStatusCodes()
    let json = try filtered.mapJSON()  // a JSONValue: .object, .array, .string...
    print(json["firstName"]?.stringValue ?? "")
} catch .statusCode(let response) {
    print("status \(response.statusCode)")
} catch .jsonMapping(let response) {
    print("not JSON: \(response.data.count) bytes")
} catch {
    print("the request failed: \(error)")
}
// snippet.end

// snippet.map-json-chain
let json = try await provider.request(.user("jp")).filterSuccessfulStatusCodes().mapJSON()
// Not a Response any more, the JSON itself.
precondition(json["lastName"] == "Potter")
// With failsOnEmptyData: false an empty body is .null instead of an error.
let nothing = try await provider.request(.archived).mapJSON(failsOnEmptyData: false)
precondition(nothing == .null)
// snippet.end

// snippet.user
struct User: Decodable {
    let id: String
    let firstName: String
    let lastName: String
}
// snippet.end

// snippet.map-user
do {
    let response = try await provider.request(.user("jp"))
    let user = try response.filterSuccessfulStatusCodes().map(User.self)
    print("\(user.firstName) \(user.lastName)")
} catch .objectMapping(let error, _) {
    print("not a User: \(error)")
} catch {
    print("the request or the status code failed: \(error)")
}
// snippet.end

// snippet.map-user-chain
let user = try await provider.request(.user("jp")).filterSuccessfulStatusCodes().map(User.self)
precondition(user.id == "jp")
// snippet.end

// snippet.timestamped-user
struct TimestampedUser: Decodable {
    let id: String
    let firstName: String
    let lastName: String
    let updated: Date
}
// snippet.end

// snippet.map-users
do {
    let response = try await provider.request(.users)
    let filtered = try response.filterSuccessfulStatusCodes()
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    let users = try filtered.map([TimestampedUser].self, atKeyPath: "users", using: decoder)
    print(users.map(\.firstName), users.map(\.updated))
} catch {
    print("a status code, JSON or object mapping error: \(error)")
}
// snippet.end

// snippet.map-users-chain
let decoder = JSONDecoder()
decoder.dateDecodingStrategy = .secondsSince1970
let users = try await provider.request(.users).filterSuccessfulStatusCodes()
    .map([TimestampedUser].self, atKeyPath: "users", using: decoder)
precondition(users.map(\.id) == ["jp", "lp"] && users[0].updated == Date(timeIntervalSince1970: 1507709925))
// snippet.end

// snippet.optional-user
struct OptionalUser: Decodable {
    let id: String?
    let firstName: String?
    let lastName: String?
    let updated: Date?
}
// snippet.end

// snippet.fails-on-empty-data
do {
    let response = try await provider.request(.newcomers)
    let filtered = try response.filterSuccessfulStatusCodes()
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    let users = try filtered.map([OptionalUser].self, atKeyPath: "users", using: decoder, failsOnEmptyData: false)
    print("\(users.count) newcomers")  // 0: the array is there, and empty
} catch {
    print("a status code or object mapping error: \(error)")
}
// snippet.end

// snippet.fails-on-empty-data-chain
// A body with nothing in it: with failsOnEmptyData false the array holds one empty OptionalUser, as in Moya.
let archived = try await provider.request(.archived).filterSuccessfulStatusCodes()
    .map([OptionalUser].self, atKeyPath: "users", using: decoder, failsOnEmptyData: false)
precondition(archived.count == 1 && archived[0].id == nil)
// snippet.end
// snippet.hide
try await server.shutdown()
