"""The mail-reading helpers themselves (mailtext.py), on mails made up here: what they accept and
what they refuse, so that a test using them fails on a mail its reader could not use."""
import pytest

from mailtext import check_filled, code_in, has_code, link_in, links_in

CODE_MAIL = {
    "to": "a@example.com", "subject": "Your authd sign-in code: 482913",
    "text": "Your authd sign-in code is 482913.\n\nIt works once and expires in 15 minutes.",
    "html": '<p>Your authd sign-in code is</p><p style="font-size:28px;letter-spacing:6px">482913</p><p>15 minutes</p>',
}


def test_the_one_code_of_a_mail_is_read_from_what_it_says():
    assert code_in(CODE_MAIL) == "482913"
    assert code_in({**CODE_MAIL, "subject": "Your sign-in code"}) == "482913"  # in the text only
    assert code_in({k: v for k, v in CODE_MAIL.items() if k != "html"}) == "482913"  # no html on the line: not checked
    assert has_code(CODE_MAIL) and not has_code({"to": "a", "subject": "Changed", "text": "at 2025-01-02T03:04:05Z (5 minutes)"})


@pytest.mark.parametrize("change", [
    {"subject": "Your sign-in code: {{code}}", "text": "Enter {{code}}."},  # the placeholder never filled
    {"subject": "Your sign-in code", "text": "Enter it soon."},              # no code at all
    {"text": "Your code is 482913, or 111111."},                             # two codes
    {"html": "<p>Your code is below.</p>"},                                  # missing from the HTML
    {"html": '<p data-code="482913">Your code is below.</p>'},               # only where no one sees it
    {"html": "<p>482913</p><p>{{product_name}}</p>"},                        # a placeholder left in the HTML
])
def test_a_mail_its_reader_cannot_use_is_refused(change):
    with pytest.raises(AssertionError):
        code_in({**CODE_MAIL, **change})


def test_links_are_read_from_the_text_and_found_in_the_html():
    mail = {"to": "a", "subject": "A new way to sign in", "text": "Not you? https://auth.example.test/not-you?t=a1&u=2.",
            "html": '<a href="https://auth.example.test/not-you?t=a1&amp;u=2">Not you?</a>'}
    assert links_in(mail) == ["https://auth.example.test/not-you?t=a1&u=2"]
    assert link_in(mail, "/not-you") == "https://auth.example.test/not-you?t=a1&u=2"
    with pytest.raises(AssertionError):
        links_in({**mail, "html": "<p>Not you? Reset your password.</p>"})
    with pytest.raises(AssertionError):
        link_in(mail, "/reset")
    with pytest.raises(AssertionError):
        check_filled({**mail, "text": "Not you? {{link}}"})
