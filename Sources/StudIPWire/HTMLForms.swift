import Foundation
import HTMLText

/// What the login flows read from an HTML page: its forms, links and message boxes.
///
/// A tolerant scanner, not a parser: login pages of Stud.IP and Shibboleth IdPs differ in quoting, case and
/// closing tags, and a browser copes with all of it, so must we. Comments, scripts and styles are skipped; any
/// bytes scan without a crash, in time linear in their length (at most ``maxBytes`` of them are read).
package struct HTMLPage: Sendable, Hashable {
    package var forms: [HTMLForm] = []
    package var links: [HTMLLink] = []
    /// Stud.IP's `messagebox messagebox_<kind>` boxes and Shibboleth's `output-message output--<kind>` lines.
    package var messages: [HTMLMessage] = []

    /// Pages beyond this are read only this far: login pages are a few kilobytes.
    package static let maxBytes = 4 << 20

    package init(forms: [HTMLForm] = [], links: [HTMLLink] = [], messages: [HTMLMessage] = []) {
        self.forms = forms
        self.links = links
        self.messages = messages
    }

    package init(_ data: Data) {
        var scanner = HTMLScanner(Array(data.prefix(Self.maxBytes)))
        self = scanner.scan()
    }

    package init(_ text: String) {
        self.init(Data(text.utf8))
    }

    /// The first form with a password input: the login form.
    package var loginForm: HTMLForm? { forms.first { $0.hasPassword } }

    /// The text of the error boxes, joined; nil when there is none.
    package var errorMessage: String? {
        let texts = messages.filter { $0.kind == "error" }.map(\.text).filter { !$0.isEmpty }
        return texts.isEmpty ? nil : texts.joined(separator: " ")
    }
}

package struct HTMLForm: Sendable, Hashable {
    package var name: String?
    /// The `action` attribute as written (entities decoded), nil when missing: the form posts to its page.
    package var action: String?
    /// Lowercased; `get` when missing, as browsers do.
    package var method: String
    package var inputs: [HTMLInput] = []
    package var buttons: [HTMLButton] = []

    package init(name: String?, action: String?, method: String, inputs: [HTMLInput] = [], buttons: [HTMLButton] = []) {
        self.name = name
        self.action = action
        self.method = method
        self.inputs = inputs
        self.buttons = buttons
    }

    package var hasPassword: Bool { inputs.contains { $0.type == "password" } }

    /// The named input of that type, if any.
    package func input(named name: String) -> HTMLInput? { inputs.first { $0.name == name } }

    /// What a browser sends without the user typing or clicking: hidden inputs, checked checkboxes and radios.
    package var presetFields: [(String, String)] {
        inputs.compactMap { input in
            guard let name = input.name, !name.isEmpty else { return nil }
            switch input.type {
            case "hidden": return (name, input.value)
            case "checkbox", "radio": return input.checked ? (name, input.value) : nil
            default: return nil
            }
        }
    }
}

package struct HTMLInput: Sendable, Hashable {
    /// Lowercased; `text` when missing.
    package var type: String
    package var name: String?
    package var id: String?
    package var value: String
    package var checked: Bool

    package init(type: String, name: String?, id: String? = nil, value: String = "", checked: Bool = false) {
        self.type = type
        self.name = name
        self.id = id
        self.value = value
        self.checked = checked
    }
}

/// A `<button>` or an `<input type="submit">`.
package struct HTMLButton: Sendable, Hashable {
    package var name: String?
    package var value: String
    /// The button's text (or the submit input's value), whitespace collapsed.
    package var text: String

    package init(name: String?, value: String, text: String) {
        self.name = name
        self.value = value
        self.text = text
    }
}

package struct HTMLLink: Sendable, Hashable {
    package var href: String
    package var text: String

    package init(href: String, text: String) {
        self.href = href
        self.text = text
    }
}

package struct HTMLMessage: Sendable, Hashable {
    /// `error`, `info`, `success`, `warning`… as the page's class names it.
    package var kind: String
    package var text: String

    package init(kind: String, text: String) {
        self.kind = kind
        self.text = text
    }
}

/// One pass over the bytes. Text is gathered only while a link, button or message box is open.
private struct HTMLScanner {
    var lexer: HTMLLexer
    var bytes: [UInt8] { lexer.bytes }
    var position: Int {
        get { lexer.position }
        set { lexer.position = newValue }
    }
    var page = HTMLPage()
    var form: HTMLForm?
    /// Open elements whose text is wanted, innermost last; the text goes to all of them.
    var collectors: [Collector] = []

    struct Collector {
        enum Target {
            case link(String)
            case button(HTMLButton)
            case message(String)
        }
        var target: Target
        var tag: String
        /// Same-named elements opened inside it, so that the right closing tag ends it.
        var depth = 0
        var text: [UInt8] = []
    }

    /// Text kept per element: enough for any label or message.
    static let maxText = 2000
    /// Elements gathering text at once; more (unclosed links, say) are not read, so each byte costs bounded work.
    static let maxOpen = 32
    /// Skipped whole. `noscript` is read: a client without JavaScript sees what it holds (a Continue button).
    static let rawTextElements: Set<String> = ["script", "style", "textarea", "title"]

    init(_ bytes: [UInt8]) { lexer = HTMLLexer(bytes) }

    mutating func scan() -> HTMLPage {
        while position < bytes.count {
            if bytes[position] == UInt8(ascii: "<") {
                tag()
            } else {
                let end = bytes[position...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                addText(bytes[position..<end])
                position = end
            }
        }
        for collector in collectors.reversed() { finish(collector) }
        closeForm()
        return page
    }

    // MARK: Tags

    private mutating func tag() {
        let start = position
        if lexer.skipComment() { return }
        position += 1
        if position < bytes.count, bytes[position] == UInt8(ascii: "!") || bytes[position] == UInt8(ascii: "?") {
            lexer.skipPast(UInt8(ascii: ">"))
            return
        }
        let closing = position < bytes.count && bytes[position] == UInt8(ascii: "/")
        if closing { position += 1 }
        let name = lexer.readName()
        guard !name.isEmpty else {
            // A lone `<` in text.
            addText(bytes[start..<min(position, bytes.count)])
            return
        }
        if closing {
            lexer.skipPast(UInt8(ascii: ">"))
            endTag(name)
            return
        }
        let attributes = lexer.readAttributes()
        startTag(name, attributes)
        if Self.rawTextElements.contains(name) {
            position = lexer.find("</\(name)", from: position) ?? bytes.count
        }
    }

    private mutating func startTag(_ name: String, _ attributes: [String: String]) {
        switch name {
        case "form":
            closeForm()
            form = HTMLForm(
                name: attributes["name"], action: attributes["action"],
                method: (attributes["method"] ?? "get").lowercased())
        case "input":
            let type = (attributes["type"] ?? "text").lowercased()
            if type == "submit" || type == "image" {
                let value = attributes["value"] ?? ""
                form?.buttons.append(HTMLButton(name: attributes["name"], value: value, text: Self.collapsed(value)))
            } else {
                form?.inputs.append(
                    HTMLInput(
                        type: type, name: attributes["name"], id: attributes["id"], value: attributes["value"] ?? "",
                        checked: attributes["checked"] != nil))
            }
        case "button":
            let type = (attributes["type"] ?? "submit").lowercased()
            guard type == "submit" else { return }
            let button = HTMLButton(name: attributes["name"], value: attributes["value"] ?? "", text: "")
            open(Collector(target: .button(button), tag: name))
        case "a":
            guard let href = attributes["href"] else { return }
            open(Collector(target: .link(href), tag: name))
        default:
            let classes = (attributes["class"] ?? "").split(whereSeparator: \.isWhitespace)
            if let kind = Self.messageKind(classes) {
                open(Collector(target: .message(kind), tag: name))
            } else {
                for index in collectors.indices where collectors[index].tag == name { collectors[index].depth += 1 }
            }
        }
    }

    private mutating func open(_ collector: Collector) {
        if collectors.count < Self.maxOpen { collectors.append(collector) }
    }

    /// `messagebox_error` → `error`, `output--error` → `error`.
    private static func messageKind(_ classes: [Substring]) -> String? {
        for prefix in ["messagebox_", "output--"] {
            if let match = classes.first(where: { $0.hasPrefix(prefix) && $0.count > prefix.count }) {
                return String(match.dropFirst(prefix.count)).lowercased()
            }
        }
        return nil
    }

    private mutating func endTag(_ name: String) {
        if name == "form" {
            closeForm()
            return
        }
        guard let index = collectors.lastIndex(where: { $0.tag == name }) else { return }
        if collectors[index].depth > 0 {
            collectors[index].depth -= 1
            return
        }
        // Elements left open inside it end with it.
        for collector in collectors[index...].reversed() { finish(collector) }
        collectors.removeSubrange(index...)
    }

    private mutating func finish(_ collector: Collector) {
        let text = Self.collapsed(HTMLEntities.decode(String(decoding: collector.text, as: UTF8.self)))
        switch collector.target {
        case .link(let href): page.links.append(HTMLLink(href: href, text: text))
        case .button(var button):
            button.text = text
            form?.buttons.append(button)
        case .message(let kind): page.messages.append(HTMLMessage(kind: kind, text: text))
        }
    }

    private mutating func closeForm() {
        if let form { page.forms.append(form) }
        form = nil
    }

    private mutating func addText(_ text: ArraySlice<UInt8>) {
        for index in collectors.indices where collectors[index].text.count < Self.maxText {
            collectors[index].text += text.prefix(Self.maxText - collectors[index].text.count)
        }
    }

    static func collapsed(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
