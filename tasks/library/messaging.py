"""Messaging: text messages, group chats, status updates and muting conversations."""

from __future__ import annotations

from tasks.library.common import NOTE, PERSON, PHONE, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Integer, ListOf, Quoted, words

_EMOJI = words(":palm_tree:", ":house:", ":coffee:", ":calendar:", ":red_circle:", ":headphones:")

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "send_sms",
        "messaging",
        "Sends a text message to a phone number.",
        (
            req("phone_number", "string", "Number in international format.", PHONE),
            req("message", "string", "Text of the message.", NOTE),
        ),
        (
            "text {phone_number}: {message}",
            "send a quick text to {phone_number} saying {message}",
            "let the number {phone_number} know {message} by text",
            "fire off an SMS, {message}, to {phone_number}",
        ),
        conflicts=("send_text",),
    ),
    ToolSpec(
        "create_group_chat",
        "messaging",
        "Creates a group conversation with several people.",
        (
            req(
                "name",
                "string",
                "Name of the group.",
                Quoted(
                    ("Book club", "Ski trip", "Project Falcon", "Family", "Roommates", "Soccer Sundays"),
                    ("", " 2026", " crew"),
                ),
            ),
            req(
                "members",
                "array",
                "Full names of the people to add.",
                ListOf(PERSON, 2, 4),
                items={"type": "string"},
            ),
        ),
        (
            "start a group called {name} with {members}",
            "make a new chat, {name}, and add {members}",
            "I want {members} in one conversation named {name}",
            "spin up {name} as a group thread for {members}",
        ),
    ),
    ToolSpec(
        "set_status",
        "messaging",
        "Sets the user's presence status in the chat app.",
        (
            req(
                "status_text",
                "string",
                "Status text.",
                Quoted(
                    (
                        "In meetings all day",
                        "Out sick",
                        "Heads down, no calls",
                        "On vacation",
                        "Commuting",
                        "Working from home",
                    ),
                    ("", " until 5", " - ping if urgent"),
                ),
            ),
            opt("emoji", "string", "Emoji code shown with the status.", _EMOJI),
            opt(
                "clear_after_minutes",
                "integer",
                "Clear the status after this many minutes.",
                Integer(30, 480, "{} minutes", 30),
            ),
        ),
        (
            "show people {status_text} next to my name",
            "update what my profile says to {status_text} with {emoji}",
            "let folks know {status_text}, and clear it after {clear_after_minutes}",
            "change my presence message to {status_text}",
        ),
        conflicts=("away_notice",),
    ),
    ToolSpec(
        "mute_conversation",
        "messaging",
        "Silences notifications from one conversation for a while.",
        (
            req(
                "conversation",
                "string",
                "Name of the conversation.",
                Quoted(
                    ("Book club", "Ski trip", "Project Falcon", "Family", "Roommates", "Marketing"),
                    ("", " 2026", " crew"),
                ),
            ),
            req("hours", "integer", "How long to stay quiet.", Integer(1, 72, "{} hours")),
        ),
        (
            "shush {conversation} for {hours}",
            "I don't want pings from {conversation} for the next {hours}",
            "silence {conversation} for {hours}, it's too noisy",
            "no alerts from {conversation} for {hours} please",
        ),
    ),
)

__all__ = ["TOOLS"]
