import ArgumentParser
import TetherServer

/// `--heal` or `--rollback` on `admin restore` and `restore-backup`: what becomes of the
/// window of history a restore drops (docs/client-reset.md, "Healing a restored server").
enum RestoreModeOption: String, EnumerableFlag {
    case heal, rollback

    static func help(for value: RestoreModeOption) -> ArgumentHelp? {
        switch value {
        case .heal: "Devices that synced inside the lost window give it back during their resets."
        case .rollback: "The lost window stays lost (undo it on purpose); devices reset as they always did."
        }
    }

    var mode: RestoreMode {
        switch self {
        case .heal: .heal
        case .rollback: .rollback
        }
    }
}
