import Testing
@testable import TetherServer

/// The per-session flow-control window the streamer takes from and `credit` grants to.
@Suite struct SendWindowTests {
    @Test func takesTheInitialWindowThenWaitsForAGrant() async {
        let window = SendWindow(initial: 2)
        #expect(await window.take())
        #expect(await window.take())
        #expect(window.available == 0)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await window.take() }
            // The taker waits: nothing is available until the grant below.
            while window.available != 0 { await Task.yield() }
            window.grant(3)
            #expect(await group.next() == true)
        }
        #expect(window.available == 2, "a grant of 3, one taken by the waiter")
    }

    @Test func closingReleasesAWaiterWithFalse() async {
        let window = SendWindow(initial: 0)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await window.take() }
            window.close()
            #expect(await group.next() == false)
        }
        #expect(await window.take() == false, "a closed window stays closed")
    }

    @Test func cancellingAWaiterReleasesIt() async {
        let window = SendWindow(initial: 0)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await window.take() }
            group.cancelAll()
            #expect(await group.next() == false)
        }
    }

    @Test func withoutFlowControlEverythingMayBeSent() async {
        let window = SendWindow(initial: nil)
        for _ in 0..<10_000 { #expect(await window.take()) }
        window.grant(5)
        #expect(window.available == nil)
    }
}
