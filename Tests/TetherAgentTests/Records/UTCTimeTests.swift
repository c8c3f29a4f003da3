import Testing
@testable import TetherAgent

/// The agent's times in status, resets and file names: UTC, without ICU's formatters (which
/// loaded ~4.5 MB of time-zone and locale data into every agent answering `tetherctl status`).
@Suite struct UTCTimeTests {
    @Test func statusTimesAreRFC3339InUTCWithMilliseconds() {
        #expect(PartitionStatus.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(PartitionStatus.iso8601(951_782_400.5) == "2000-02-29T00:00:00.500Z")
        #expect(PartitionStatus.iso8601(1_764_190_381.25) == "2025-11-26T20:53:01.250Z")
    }

    @Test func fileNameStampsAreUTCToTheSecond() {
        #expect(ResetRecord.utcStamp(100) == "19700101T000140Z")
        #expect(ResetRecord.utcStamp(951_782_399.999) == "20000228T235959Z")
        #expect(ResetRecord.utcStamp(1_764_190_381.25) == "20251126T205301Z")
    }
}
