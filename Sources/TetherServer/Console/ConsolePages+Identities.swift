import Foundation

/// The console's enrollment pages: the keys (create, revoke), the enrolled devices, and a
/// device's identity with its actions (tags, rotate, revoke, remove), every action behind
/// ``ConsoleActions``' confirmation.
extension ConsolePages {
    static func enrollment(_ keys: AdminAPI.EnrollmentKeys, identities: AdminAPI.Identities, after: String?, csrf: String) -> String {
        let keyRows = keys.keys.map { k -> [String] in
            let revoke = k.state == "revoked" ? "-" : H.form(
                action: "/console/actions/revoke-enroll-key", csrf: csrf,
                fields: "<input type=\"hidden\" name=\"key\" value=\"\(H.escape(k.id))\">", button: "Revoke…", danger: true)
            return [
                "<code>\(H.escape(k.id))</code>", H.escape(k.state), k.usesAllowed.map { "\(k.usesSpent) of \($0)" } ?? "\(k.usesSpent), reusable",
                H.escape(k.expiresAt ?? "never"), H.escape(TagEdit.describe(k.tags)), H.escape(k.createdAt), H.escape(k.createdBy),
                H.escape(k.note.isEmpty ? "-" : k.note), revoke,
            ]
        }
        let enrolled = identities.identities.filter { $0.source == "enrolled" }
        let deviceRows = enrolled.map { i -> [String] in
            [
                "<a href=\"/console/devices/\(H.segment(i.deviceID ?? ""))\">\(H.escape(i.name))</a>", H.escape(i.state + (i.rotationPending ? ", rotating" : "")),
                H.escape(TagEdit.describe(i.tags)), H.escape(i.enrolledWithKey ?? "-"), H.escape(i.createdAt ?? "-"),
                i.credentialAgeSeconds.map { "\($0 / 86400) d" } ?? "-", i.lastSeenSecondsAgo.map { "\($0) s ago" } ?? "never",
            ]
        }
        let next = identities.nextAfter.map { "<p><a href=\"/console/enrollment?after=\(H.segment($0))\">Next devices</a></p>" } ?? ""
        return H.page(
            title: "Enrollment", current: "enrollment", signedIn: true,
            body: """
                <p>A device that holds an enrollment key enrolls itself and gets the key's tags; grants by tag then decide what it syncs.</p>
                <h2>New enrollment key</h2>
                <form method="post" action="/console/actions/create-enroll-key">
                <input type="hidden" name="csrf" value="\(H.escape(csrf))">
                \(H.input("tags", label: "Tags (K=V, separated by spaces)", required: false))
                \(H.input("uses", label: "Devices it may enroll (empty: one)", type: "number", required: false))
                <p><input id="field-reusable" name="reusable" type="checkbox" value="yes"> <label for="field-reusable">Reusable (any number of devices)</label></p>
                \(H.input("expires", label: "Expires after (90s, 30m, 24h, 7d; empty: never)", required: false))
                \(H.input("note", label: "Note", required: false))
                <button type="submit">Create key…</button>
                </form>
                <h2>Enrollment keys</h2>
                \(keys.keys.isEmpty ? "<p>No enrollment key yet.</p>" : H.table(
                    caption: "Enrollment keys, newest first", headers: ["Key", "State", "Uses", "Expires", "Tags", "Created", "By", "Note", "Revoke"],
                    rows: keyRows))
                <h2>Enrolled devices</h2>
                \(enrolled.isEmpty ? "<p>No enrolled device\(after == nil ? " yet" : " after \(H.escape(after ?? ""))").</p>" : H.table(
                    caption: "Enrolled devices by name", headers: ["Device", "State", "Tags", "Key", "Enrolled", "Credential age", "Last seen"],
                    rows: deviceRows))
                \(next)
                """)
    }

    /// What the console shows once after a key is made: the key itself, and where it goes.
    static func keyCreated(_ created: AdminAPI.EnrollmentKeyCreated) -> String {
        H.page(
            title: "Enrollment key created", current: "enrollment", signedIn: true,
            body: """
                <p class="notice" role="status">Enrollment key \(H.escape(created.enrollmentKey.id)) created: \(H.escape(keyTerms(created.enrollmentKey))).</p>
                <p>This is the only time the key is shown: the server keeps only its digest. Put it in the devices' <code>/etc/tether/enroll.key</code> (mode 0600, <code>[server] enrollment_key_file</code>).</p>
                <h2>Enrollment key</h2>
                <pre id="enrollment-key"><code>\(H.escape(created.key))</code></pre>
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
    static func identitySection(_ i: AdminAPI.Identity, csrf: String) -> String {
        let device = "<input type=\"hidden\" name=\"device\" value=\"\(H.escape(i.name))\"><input type=\"hidden\" name=\"device-id\" value=\"\(H.escape(i.deviceID ?? ""))\">"
        let actions = i.state == "revoked"
            ? "<p>The device is revoked: its credential is refused. Removing it lets its device id enroll again.</p>"
            : """
            <h3>Tags</h3>
            <form method="post" action="/console/actions/tag-device" class="inline">
            <input type="hidden" name="csrf" value="\(H.escape(csrf))">\(device)
            \(H.input("tags", label: "Tags to change (K=V sets, K= removes)"))
            <button type="submit">Change tags…</button>
            </form>
            <h3>Credential</h3>
            \(H.form(action: "/console/actions/rotate-device", csrf: csrf, fields: device, button: "Rotate credential…"))
            \(H.form(action: "/console/actions/revoke-device", csrf: csrf, fields: device, button: "Revoke device…", danger: true))
            """
        return """
            <h2>Enrollment</h2>
            <dl><dt>Name</dt><dd>\(H.escape(i.name))</dd><dt>State</dt><dd>\(H.escape(i.state))</dd>
            <dt>Tags</dt><dd>\(H.escape(TagEdit.describe(i.tags)))</dd><dt>Enrolled with key</dt><dd>\(H.escape(i.enrolledWithKey ?? "-"))</dd>
            <dt>Enrolled</dt><dd>\(H.escape(i.createdAt ?? "-"))</dd><dt>Credential issued</dt><dd>\(H.escape(i.credentialIssuedAt ?? "-"))\(i.rotationPending ? " <span class=\"flag\">rotation pending</span>" : "")</dd>
            <dt>Last seen</dt><dd>\(H.escape(i.lastSeenAt ?? "never"))</dd></dl>
            \(actions)
            \(H.form(action: "/console/actions/remove-device", csrf: csrf, fields: device, button: "Remove device…", danger: true))
            """
    }
}
