import Testing
@testable import TetherAgent

@Suite struct ProgramPagesTests {
    @Test func findsTheMappingsOfTheExecutable() {
        let maps = """
            55e4e2902000-55e4e4da2000 r-xp 02000000 08:01 123 /usr/bin/tetherd
            55e4e4da2000-55e4e4e9e000 r--p 04000000 08:01 123 /usr/bin/tetherd
            55e524329000-55e52570a000 rw-p 00000000 00:00 0                          [heap]
            7f05ff044000-7f05ff19a000 r-xp 00028000 08:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6
            7f05ff200000-7f05ff299000 r--p 00000000 08:01 789 /usr/bin/tetherd-other
            """
        let ranges = ProgramPages.mappings(of: "/usr/bin/tetherd", in: maps)
        #expect(ranges == [0x55e4e2902000..<0x55e4e4da2000, 0x55e4e4da2000..<0x55e4e4e9e000])
    }

    @Test func pagingOutTheTestProgramKeepsItRunning() {
        // Whatever the kernel drops comes back on use: this test goes on running.
        let advised = ProgramPages.pageOut()
        #expect(advised > 0)
        #expect(ProgramPages.mappings(of: "/nonexistent", in: "") == [])
    }
}
