import Foundation
import Testing
import TetherTestSupport
@testable import TetherServer

/// ``StorageRoles``: one storage plays every role until a test replaces one with a double.
@Suite struct StorageRolesTests {
    @Test func everyRoleIsTheStorageUntilOneIsReplaced() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = try SQLiteServerStorage(directory: dir.path)
        var roles = StorageRoles(storage)
        let played: [AnyObject] = [
            roles.policy as AnyObject, roles.history as AnyObject, roles.integration as AnyObject, roles.heal as AnyObject,
            roles.admin as AnyObject, roles.housekeeping as AnyObject, roles.ledger as AnyObject, roles.identity as AnyObject,
        ]
        #expect(played.allSatisfy { $0 === storage })
        let heals = ScriptedHeals(storage)
        roles.heal = heals
        #expect(roles.heal as AnyObject === heals)
        #expect(roles.integration as AnyObject === storage && roles.history as AnyObject === storage)
    }
}
