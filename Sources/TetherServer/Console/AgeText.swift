/// Ages and spans in words for the console (`just now`, `12 min ago`, `3 h ago`, `2 d ago`):
/// the largest whole unit, rounded down, so a page reads at a glance and a row never looks
/// younger than it is.
enum AgeText {
    /// How long ago, from seconds: under a minute (or a clock a little ahead) is `just now`.
    static func words(seconds: some BinaryInteger) -> String {
        seconds < 60 ? "just now" : span(seconds: seconds) + " ago"
    }

    /// A span of time in its largest whole unit: `45 s`, `12 min`, `3 h`, `2 d`.
    static func span(seconds: some BinaryInteger) -> String {
        let seconds = max(0, Int(clamping: seconds))
        return switch seconds {
        case ..<60: "\(seconds) s"
        case ..<3600: "\(seconds / 60) min"
        case ..<86_400: "\(seconds / 3600) h"
        default: "\(seconds / 86_400) d"
        }
    }
}
