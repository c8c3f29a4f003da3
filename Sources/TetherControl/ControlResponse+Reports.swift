import Foundation

extension ControlResponse {
    /// A success whose result is `report` (one of the `…Report` types), as the JSON the
    /// documentation shows.
    public static func success(report: some Encodable) -> Self {
        do {
            return .success(try JSONValue(encoding: report))
        } catch {
            return .failure("cannot encode the answer: \(error)")
        }
    }
}

extension JSONValue {
    /// `value` as a JSON document.
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// This document read as `type` (a `…Report` of a command's result).
    public func decode<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(self))
    }
}
