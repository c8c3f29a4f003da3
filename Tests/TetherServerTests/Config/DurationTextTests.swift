import Testing
import TetherServer

@Test func durationsAsOperatorsTypeThem() {
    #expect(DurationText.seconds("90") == 90 && DurationText.seconds("90s") == 90)
    #expect(DurationText.seconds("30m") == 1800 && DurationText.seconds("24h") == 86400 && DurationText.seconds("7d") == 604_800)
    for bad in ["", "s", "-5m", "1.5h", "5x", "５m", "+3s"] { #expect(DurationText.seconds(bad) == nil, "\(bad)") }
}
