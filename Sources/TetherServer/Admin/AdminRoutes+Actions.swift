import Foundation
import Hummingbird
import TetherProtocol

extension AdminAPI.ActionRequest: ResponseEncodable {}
extension AdminAPI.DeviceActions: ResponseEncodable {}
extension AdminAPI.DeviceAction: ResponseEncodable {}
extension AdminAPI.SelectionCount: ResponseEncodable {}

extension AdminAPI {
    /// `GET /admin/actions/count`: how many devices a selection takes.
    package struct SelectionCount: Codable, Sendable, Hashable {
        package var devices: Int
    }
}

/// The admin API's remote-action routes (docs/server.md "Admin HTTP API", "Remote actions"),
/// asked as `admin` (the admin token's holder).
extension AdminRoutes {
    func registerActions(on admin: RouterGroup<Context>) {
        admin.post("actions") { request, context in
            let order = try await request.decode(as: AdminAPI.ActionOrder.self, context: context)
            let target: RemoteActionTarget
            switch (order.device, order.selection) {
            case (let device?, nil): target = .device(device)
            case (nil, let selection?): target = .selection(selection)
            default: throw AdminError(.badRequest, "name either a \"device\" or a \"selection\"")
            }
            return try await control.requestActions(
                RemoteActionKind(rawValue: order.action), partition: order.partition, target: target, actor: Self.actor)
        }
        admin.get("actions/count") { request, _ in
            let query = request.uri.queryParameters
            let selection = AdminAPI.Selection(
                partition: query["partition"].map(String.init), state: query["state"].map(String.init), stale: query["stale"].map(String.init),
                text: query["text"].map(String.init))
            return AdminAPI.SelectionCount(devices: try await control.countSelection(selection))
        }
        admin.get("actions") { request, _ in
            guard let device = request.uri.queryParameters["device"].map(String.init), !device.isEmpty else {
                throw AdminError(.badRequest, "name the device: /admin/actions?device=ID")
            }
            let resolved = try await control.resolveActionDevice(device)
            return try await control.deviceActions(deviceID: resolved.key.deviceID)
        }
        admin.get("actions/:id") { _, context in
            guard let id = Int64(try context.parameters.require("id")), id > 0 else { throw AdminError(.badRequest, "an action id is a number") }
            return try await control.deviceAction(id: id)
        }
    }
}
