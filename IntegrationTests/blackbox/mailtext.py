"""Mail as a person reads it (contract §12, "Mail is read by people"; issue #34).

A test takes a code or a link from what the mail says: its subject, its text and its HTML. The
outbox line's side field that repeats the code is a convenience of the transport and nothing here
reads it: a mail whose wording lost its code, or kept a `{{placeholder}}`, must fail the tests that
use it, as it fails the person who gets it.

Plain functions, no pytest, so that IntegrationTests/crash/run uses them too.
"""
import html as html_module
import json
import re

# A code is a run of digits standing alone: 6 today (CodePolicy.digits), up to 10 allowed. Times
# ("2025-01-02T03:04:05Z"), lifetimes ("15 minutes") and CSS ("28px") never make such a run.
CODE = re.compile(r"(?<![0-9A-Za-z])[0-9]{6,10}(?![0-9A-Za-z])")
LINK = re.compile(r"https?://[^\s<>\"')]+")
PARTS = ("subject", "text", "html")


def check_filled(mail):
    """Fails when a placeholder (`{{…}}`) is left in the subject, the text or the HTML."""
    for part in PARTS:
        value = mail.get(part) or ""
        if "{{" in value:
            raise AssertionError(f"a placeholder is left in the {part} of the mail to {mail.get('to')} "
                                 f"({mail.get('subject')!r}): {value!r}")
    return mail


def read_mail(line):
    """One outbox line as a mail, checked for placeholders left in it."""
    return check_filled(json.loads(line))


def visible(html):
    """What a reader sees of an HTML body: the text without tags, with entities decoded."""
    html = re.sub(r"(?is)<(script|style|head)\b.*?</\1\s*>", " ", html)
    return html_module.unescape(re.sub(r"(?s)<[^>]*>", " ", html))


def code_in(mail):
    """The one code `mail` exists for, read as a person reads it.

    It is the single run of digits (CODE) in the subject and text together (the same code may be in
    both); when the line carries `html`, the code is also in the HTML's visible text. No placeholder
    is left anywhere. Anything else fails, naming the mail."""
    check_filled(mail)
    found = sorted(set(CODE.findall(mail.get("subject") or "")) | set(CODE.findall(mail.get("text") or "")))
    if len(found) != 1:
        raise AssertionError(f"the mail to {mail.get('to')} shows {len(found)} codes {found} in its subject and text, "
                             f"not one: subject {mail.get('subject')!r}, text {mail.get('text')!r}")
    code = found[0]
    if mail.get("html") is not None and code not in CODE.findall(visible(mail["html"])):
        raise AssertionError(f"the code {code} of the mail to {mail.get('to')} ({mail.get('subject')!r}) "
                             f"is not in its HTML: {mail['html']!r}")
    return code


def links_in(mail):
    """Every link in the subject and text, each also in the HTML (as a link or as text) when the line
    carries `html`; no placeholder is left anywhere."""
    check_filled(mail)
    links = []
    for link in LINK.findall((mail.get("subject") or "") + "\n" + (mail.get("text") or "")):
        link = link.rstrip(".,;:!?")
        if link not in links:
            links.append(link)
    if mail.get("html") is not None:
        page = html_module.unescape(mail["html"])
        for link in links:
            if link not in page:
                raise AssertionError(f"the link {link} of the mail to {mail.get('to')} ({mail.get('subject')!r}) "
                                     f"is not in its HTML: {mail['html']!r}")
    return links


def link_in(mail, containing=""):
    """The one link of `mail` (see links_in) that contains `containing`."""
    found = [link for link in links_in(mail) if containing in link]
    if len(found) != 1:
        raise AssertionError(f"the mail to {mail.get('to')} ({mail.get('subject')!r}) has {len(found)} links "
                             f"with {containing!r}, not one: {mail.get('text')!r}")
    return found[0]


def has_code(mail):
    """Whether the subject or text shows a code at all (notices show none)."""
    return bool(CODE.search((mail.get("subject") or "") + "\n" + (mail.get("text") or "")))
