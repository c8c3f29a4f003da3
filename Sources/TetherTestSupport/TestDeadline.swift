/// How long a test waits for what it expects before it fails, unless it says otherwise.
/// A deadline costs nothing while the test passes (every wait returns as soon as its condition
/// holds); it only has to be longer than the worst delay of a loaded machine. 30 s: at the
/// start of the parallel unit phase on a two-core CI machine, tasks have waited over 12 s for
/// a cooperative thread, which a 10-s deadline once turned into a failure.
package enum TestDeadline {
    package static let standard: Duration = .seconds(30)
}
