import Foundation

/// The console's enrollment pages: the keys (create, revoke), the enrolled devices, and a
/// device's identity with its actions (tags, rotate, revoke, remove), every action behind
/// ``ConsoleActions``' confirmation.
extension ConsolePages {
    static func enrollment(_ keys: AdminAPI.EnrollmentKeys, identities: AdminAPI.Identities, after: String?, csrf: String) -> HTML {
        let keyRows = keys.keys.map { k -> [HTML] in
            let revoke: HTML = k.state == "revoked" ? "-" : H.form(
                action: "/console/actions/revoke-enroll-key", csrf: csrf,
                fields: H.hidden("key", k.id), button: "Revoke…", danger: true)
            return [
                "<code>\(k.id)</code>", "\(k.state)", "\(k.usesAllowed.map { "\(k.usesSpent) of \($0)" } ?? "\(k.usesSpent), reusable")",
                "\(k.expiresAt ?? "never")", "\(TagEdit.describe(k.tags))", "\(k.createdAt)", "\(k.createdBy)",
                "\(k.note.isEmpty ? "-" : k.note)", revoke,
            ]
        }
        let enrolled = identities.identities.filter { $0.source == "enrolled" }
        let deviceRows = enrolled.map { i -> [HTML] in
            [
                "<a href=\"/console/devices/\(H.segment(i.deviceID ?? ""))\">\(i.name)</a>", "\(i.state + (i.rotationPending ? ", rotating" : ""))",
                "\(TagEdit.describe(i.tags))", "\(i.enrolledWithKey ?? "-")", "\(i.createdAt ?? "-")",
                "\(i.credentialAgeSeconds.map { "\($0 / 86400) d" } ?? "-")", "\(i.lastSeenSecondsAgo.map { AgeText.words(seconds: $0) } ?? "never")",
            ]
        }
        let next: HTML = identities.nextAfter.map { "<p><a href=\"/console/enrollment?after=\(H.segment($0))\">Next devices</a></p>" } ?? ""
        return H.page(
            title: "Enrollment", current: "enrollment", signedIn: true,
            body: """
                <p>A device that holds an enrollment key enrolls itself and gets the key's tags; grants by tag then decide what it syncs.</p>
                <h2>New enrollment key</h2>
                <form method="post" action="/console/actions/create-enroll-key">
                <input type="hidden" name="csrf" value="\(csrf)">
                \(H.input("tags", label: "Tags (K=V, separated by spaces)", required: false))
                \(H.input("uses", label: "Devices it may enroll (empty: one)", type: "number", required: false))
                <p><input id="field-reusable" name="reusable" type="checkbox" value="yes"> <label for="field-reusable">Reusable (any number of devices)</label></p>
                \(H.input("expires", label: "Expires after (90s, 30m, 24h, 7d; empty: never)", required: false))
                \(H.input("note", label: "Note", required: false))
                <button type="submit">Create key…</button>
                </form>
                <h2>Enrollment keys</h2>
                \(keys.keys.isEmpty ? HTML("<p>No enrollment key yet.</p>") : H.table(
                    caption: "Enrollment keys, newest first", headers: ["Key", "State", "Uses", "Expires", "Tags", "Created", "By", "Note", "Revoke"],
                    rows: keyRows))
                <h2>Enrolled devices</h2>
                \(enrolled.isEmpty ? HTML("<p>No enrolled device\(after == nil ? " yet" : " after \(after ?? "")").</p>") : H.table(
                    caption: "Enrolled devices by name", headers: ["Device", "State", "Tags", "Key", "Enrolled", "Credential age", "Last seen"],
                    rows: deviceRows))
                \(next)
                """)
    }

    /// What the console shows once after a key is made: the key itself, and where it goes.
    static func keyCreated(_ created: AdminAPI.EnrollmentKeyCreated) -> HTML {
        H.page(
            title: "Enrollment key created", current: "enrollment", signedIn: true,
            body: """
                <p class="notice" role="status">Enrollment key \(created.enrollmentKey.id) created: \(keyTerms(created.enrollmentKey)).</p>
                <p>This is the only time the key is shown: the server keeps only its digest. Put it in the devices' <code>/etc/tether/enroll.key</code> (mode 0600, <code>[server] enrollment_key_file</code>).</p>
                <h2>Enrollment key</h2>
                <pre id="enrollment-key"><code>\(created.key)</code></pre>
                <p><a href="/console/enrollment">Back</a></p>
                """)
    }

    static func keyTerms(_ k: AdminAPI.EnrollmentKey) -> String {
        [
            "tags \(TagEdit.describe(k.tags))", k.usesAllowed.map { "\($0) use\($0 == 1 ? "" : "s")" } ?? "reusable",
            k.expiresAt.map { "expires \($0)" } ?? "does not expire",
        ].joined(separator: ", ")
    }

    /// A device's identity on its page: enrollment, credential, tags, and its actions.
    static func identitySection(_ i: AdminAPI.Identity, csrf: String) -> HTML {
        let device = H.hidden("device", i.name) + H.hidden("device-id", i.deviceID ?? "")
        let actions: HTML = i.state == "revoked"
            ? "<p>The device is revoked: its credential is refused. Removing it lets its device id enroll again.</p>"
            : """
            <h3>Tags</h3>
            <form method="post" action="/console/actions/tag-device" class="inline">
            <input type="hidden" name="csrf" value="\(csrf)">\(device)
            \(H.input("tags", label: "Tags to change (K=V sets, K= removes)"))
            <button type="submit">Change tags…</button>
            </form>
            <h3>Credential</h3>
            \(H.form(action: "/console/actions/rotate-device", csrf: csrf, fields: device, button: "Rotate credential…"))
            \(H.form(action: "/console/actions/revoke-device", csrf: csrf, fields: device, button: "Revoke device…", danger: true))
            """
        return """
            <h2>Enrollment</h2>
            <dl><dt>Name</dt><dd>\(i.name)</dd><dt>State</dt><dd>\(i.state)</dd>
            <dt>Tags</dt><dd>\(TagEdit.describe(i.tags))</dd><dt>Enrolled with key</dt><dd>\(i.enrolledWithKey ?? "-")</dd>
            <dt>Enrolled</dt><dd>\(i.createdAt ?? "-")</dd><dt>Credential issued</dt><dd>\(i.credentialIssuedAt ?? "-")\(i.rotationPending ? HTML(" <span class=\"flag\">rotation pending</span>") : "")</dd>
            <dt>Last seen</dt><dd>\(i.lastSeenAt ?? "never")</dd></dl>
            \(actions)
            \(H.form(action: "/console/actions/remove-device", csrf: csrf, fields: device, button: "Remove device…", danger: true))
            """
    }
}
