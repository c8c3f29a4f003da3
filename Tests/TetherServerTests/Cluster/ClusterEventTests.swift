import Testing
import TetherProtocol
import TetherServer

@Suite struct ClusterEventTests {
    let store = PartitionName("store-17")!

    @Test func eventsRoundTripThroughAPayload() {
        let events: [ClusterEvent] = [
            .newVersion(store), .restored(store), .flagsChanged, .schemaChanged, .grantsChanged, .deviceChanged("till-1"), .deviceRevoked("till-2"),
            .actionsQueued("4f1c0a"), .actionsQueued(nil),
        ]
        let payloads = ClusterEvent.payloads(events, sender: "instance-1")
        #expect(payloads == ["instance-1\nv store-17\nr store-17\nf\ns\ng\nd till-1\nk till-2\na 4f1c0a\na"])
        let parsed = ClusterEvent.parse(payload: payloads[0])
        #expect(parsed.sender == "instance-1" && parsed.events == events)
    }

    @Test func payloadsStayUnderPostgresLimitAndLoseNothing() {
        let events = (0..<2000).map { ClusterEvent.newVersion(PartitionName("partition-\($0)")!) }
        let payloads = ClusterEvent.payloads(events, sender: "i")
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= 7900 && $0.hasPrefix("i\n") })
        #expect(payloads.flatMap { ClusterEvent.parse(payload: $0).events } == events)
        #expect(ClusterEvent.payloads([], sender: "i").isEmpty)
    }

    @Test func unknownLinesAreSkipped() {
        let parsed = ClusterEvent.parse(payload: "x\nv store-17\nzzz\nv not a name\nr\nf")
        #expect(parsed.sender == "x" && parsed.events == [.newVersion(store), .flagsChanged])
        #expect(ClusterEvent.parse(payload: "").events.isEmpty)
        #expect(ClusterEvent.parse(payload: "x\nd bad name\nk\nk -x\nd till-1").events == [.deviceChanged("till-1")])
        #expect(ClusterEvent.parse(payload: "x\na a/b\na two words\na ok-1").events == [.actionsQueued("ok-1")])
    }
}
