import Testing
import TetherProtocol
@testable import TetherAgent

/// A bind's own facts: one run of uploads at a time, how long it was bound, when its uploads
/// start, the watchdog's clocks; and the 108 watch that spans binds.
@Suite struct PartitionSessionTests {
    static func session() -> PartitionSession {
        let link = ScriptedSession(request: BindRequest(session: 1, partition: "p", token: "t", identity: nil))
        let session = PartitionSession()
        session.opened(link, uploadSalt: 42)
        return session
    }

    @Test func oneRunOfUploadsAtATimeGoesRoundAgainWhenAskedMeanwhile() {
        let session = Self.session()
        #expect(session.uploads == PartitionSession.Uploads(salt: 42))
        // Each step's answer, in order.
        var answers: [Bool] = []
        answers.append(session.claimUploads())
        answers.append(session.uploadRoundEnded())  // nothing asked meanwhile: the run ends
        answers.append(session.claimUploads())  // a run is under way
        answers.append(session.claimUploads())
        answers.append(session.uploadRoundEnded())  // asked meanwhile (twice): once more
        answers.append(session.uploadRoundEnded())
        session.uploadsStopped()
        answers.append(session.claimUploads())  // a new run after the last one stopped
        #expect(answers == [true, false, false, false, true, false, true])
    }

    @Test func aSessionIsBoundFromWhenItBecameReady() {
        let session = Self.session()
        #expect(session.boundFor == nil && session.access == .readwrite)
        session.becameReady(access: .read)
        #expect(session.access == .read)
        #expect(session.boundFor != nil)
    }

    @Test func uploadsWaitUntilTheSessionIsReadyForThem() async {
        let session = Self.session()
        #expect(PartitionSession().link == nil && PartitionSession().uploads == nil, "nothing to upload on before the bind is sent")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await session.waitUntilReadyForUploads() }
            session.becameReady(access: .readwrite)
            session.startUploads()
            await group.next()
        }
        await session.waitUntilReadyForUploads()  // stays ready
    }

    @Test func theWatchdogSeesABusySessionThatMakesNoProgress() {
        let session = Self.session()
        #expect(session.isMakingProgress(limit: .zero), "idle between events")
        session.eventStarted()
        #expect(!session.isMakingProgress(limit: .zero), "busy, and no progress within no time")
        #expect(session.isMakingProgress(limit: .seconds(3600)))
        session.progressed()
        session.eventHandled()
        #expect(session.isMakingProgress(limit: .zero), "idle again")
    }

    @Test func bindsThatKeepMeeting108TakeANewIdentityAfterTheLimit() {
        var watch = BoundElsewhereWatch()
        let taken = SyncError(.clientFileBoundInOtherSession, "bound elsewhere", action: .retry)
        let start = ContinuousClock.now
        let other = watch.identityTakenElsewhere(SyncError(.otherSessionError, "busy", action: .retry), now: start)
        #expect(other == nil && watch.since == nil, "another error does not start the watch")
        let first = watch.identityTakenElsewhere(taken, now: start)
        #expect(first == nil && watch.since == start)
        let halfway = watch.identityTakenElsewhere(taken, now: start + FaultInjection.boundElsewhereLimit / 2)
        #expect(halfway == nil)
        let reset = watch.identityTakenElsewhere(taken, now: start + FaultInjection.boundElsewhereLimit)
        #expect(reset?.code == .badClientVersion && reset?.action == .clientReset)
        #expect(watch.since == nil, "the reset starts a new watch")
        _ = watch.identityTakenElsewhere(taken, now: start)
        watch.bound()
        #expect(watch.since == nil, "a bind that succeeds ends it")
    }
}
