"""Developer operations for a coding agent: reading and listing files, shell commands, tests,
patches and git diffs, agent memory, scheduled jobs, team messages, and asking for clarification
or escalating.
"""

from __future__ import annotations

from tasks.library.common import (
    DIRECTORY,
    HANDLE,
    NOTE,
    SOURCE_PATH,
    TEST_PATH,
    CronSchedule,
    choices,
    enum_req,
    opt,
    req,
)
from tasks.spec import ToolSpec
from tasks.value_generators import Composed, Flag, Integer, Quoted, words

_SHELL = Quoted(
    (
        "ls -la",
        "df -h",
        "docker ps",
        "npm install",
        "make build",
        "du -sh node_modules",
        "git status",
        "kubectl get pods",
        "pip list --outdated",
        "uptime",
        "cargo build --release",
        "go vet ./...",
    ),
)
_MEMORY_KEY = Composed(
    (
        ("preferred", "default", "staging", "backup", "team", "release"),
        ("editor", "branch", "region", "reviewer", "port", "timezone", "database"),
    ),
    "{0}_{1}",
    quote=True,
    vague=("that setting", "the thing I told you"),
)
_CODE_BEFORE = Composed(
    (
        ("timeout", "retries", "max_workers", "batch_size", "port", "cache_ttl"),
        tuple(str(n) for n in (3, 5, 10, 30, 60, 100, 8080)),
    ),
    "{0} = {1}",
    quote=True,
    vague=("that line", "the bad line"),
)
_CODE_AFTER = Composed(
    (
        ("timeout", "retries", "max_workers", "batch_size", "port", "cache_ttl"),
        tuple(str(n) for n in (2, 4, 20, 45, 90, 200, 9090)),
    ),
    "{0} = {1}",
    quote=True,
    vague=("the right value", "what it should be"),
)
_REF = Composed(
    (
        (
            "main",
            "develop",
            "feature/login",
            "feature/search",
            "bugfix/retry",
            "release/2.4",
            "HEAD~1",
            "HEAD~3",
            "v1.8.0",
            "origin/main",
        ),
    ),
    "{0}",
    vague=("the branch we discussed", "that commit"),
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        "developer",
        "Returns the contents of a file in the workspace.",
        (
            req("path", "string", "File path relative to the workspace root.", SOURCE_PATH),
            opt("start_line", "integer", "First line to return.", Integer(1, 200)),
            opt("end_line", "integer", "Last line to return.", Integer(201, 600)),
        ),
        (
            "show me what's in {path}",
            "print lines {start_line} to {end_line} of {path}",
            "what does {path} contain?",
            "open up {path} so I can see the code",
        ),
        conflicts=("shell_cat",),
    ),
    ToolSpec(
        "list_files",
        "developer",
        "Lists the files in a workspace directory.",
        (
            req("directory", "string", "Directory relative to the workspace root.", DIRECTORY),
            opt(
                "pattern",
                "string",
                "Glob the names must match.",
                words("*.py", "*.ts", "*.md", "*.yaml", "*.go"),
            ),
            opt(
                "recursive",
                "boolean",
                "Descend into sub-directories.",
                Flag(("including subfolders",), ("just the top level",)),
                default=False,
            ),
        ),
        (
            "what's inside {directory}?",
            "which {pattern} files live in {directory}",
            "show everything under {directory} {recursive}",
            "give me an inventory of {directory}",
        ),
        conflicts=("shell_ls",),
    ),
    ToolSpec(
        "run_shell",
        "developer",
        "Executes a shell command in the workspace and returns its output.",
        (
            req("command", "string", "The command line.", _SHELL),
            opt("cwd", "string", "Working directory.", DIRECTORY),
            opt(
                "timeout_seconds",
                "integer",
                "Kill the command after this long.",
                Integer(10, 600, "{} seconds", 10),
                default=60,
            ),
        ),
        (
            "execute {command} in {cwd}",
            "fire off {command} in the terminal",
            "do {command} for me and give up after {timeout_seconds}",
            "in {cwd}, type {command} and tell me what comes back",
        ),
        conflicts=("shell_ls", "shell_cat", "shell_test", "shell_git", "shell_edit"),
    ),
    ToolSpec(
        "run_tests",
        "developer",
        "Runs the automated test suite for a path and reports failures.",
        (
            req("path", "string", "Test file or directory.", TEST_PATH),
            opt(
                "keyword",
                "string",
                "Only tests whose names contain this.",
                words("retry", "timeout", "auth", "unicode", "empty_input", "pagination"),
            ),
            opt(
                "fail_fast",
                "boolean",
                "Stop at the first failure.",
                Flag(("and stop at the first failure",)),
                default=False,
            ),
        ),
        (
            "check whether {path} passes",
            "kick off the checks in {path}, only the ones matching {keyword}",
            "does {path} still go green? {fail_fast}",
            "verify nothing's broken in {path}",
        ),
        conflicts=("shell_test",),
    ),
    ToolSpec(
        "apply_patch",
        "developer",
        "Edits a file by replacing one exact snippet with another.",
        (
            req("file_path", "string", "File to edit.", SOURCE_PATH),
            req("old_text", "string", "Exact text to replace.", _CODE_BEFORE),
            req("new_text", "string", "Replacement text.", _CODE_AFTER),
        ),
        (
            "in {file_path}, swap {old_text} for {new_text}",
            "change {old_text} to {new_text} inside {file_path}",
            "fix {file_path}: {old_text} should read {new_text}",
            "edit {file_path} so that {old_text} becomes {new_text}",
        ),
        conflicts=("shell_edit",),
    ),
    ToolSpec(
        "git_diff",
        "developer",
        "Shows uncommitted changes compared with a git revision.",
        (
            req("ref", "string", "Branch, tag or commit to compare against.", _REF),
            opt("path", "string", "Limit to this path.", SOURCE_PATH),
            opt("staged", "boolean", "Only staged changes.", Flag(("only the staged stuff",)), default=False),
        ),
        (
            "what did I change since {ref}?",
            "how does my working copy differ from {ref} in {path}",
            "compare {ref} with what I have, {staged}",
            "show me my edits relative to {ref}",
        ),
        conflicts=("shell_git",),
    ),
    ToolSpec(
        "remember",
        "developer",
        "Stores a fact in the agent's long-term memory under a key.",
        (
            req("key", "string", "Name to store the fact under.", _MEMORY_KEY),
            req(
                "value",
                "any",
                "The fact to keep.",
                # no bare number: untyped, "5432" reads back as the number 5432 from the XML
                # families' markup (Qwen3-Coder, GLM), where the gold answer is the string
                Quoted(
                    ("vim", "eu-west-1", "Priya", "port 5432", "UTC+2", "release/2.4", "postgres-replica")
                ),
            ),
        ),
        (
            "don't forget: {key} is {value}",
            "store this for later, {key} -> {value}",
            "jot down that {key} equals {value}",
            "make a note that my {key} is {value}",
        ),
    ),
    ToolSpec(
        "retrieve_memory",
        "developer",
        "Looks up a fact the agent stored earlier.",
        (req("key", "string", "Name the fact was stored under.", _MEMORY_KEY),),
        (
            "what did I tell you my {key} was?",
            "look up the note {key}",
            "pull {key} back out of your notes",
            "what's stored under {key}?",
        ),
    ),
    ToolSpec(
        "cron_create",
        "developer",
        "Creates a recurring scheduled job from a cron expression.",
        (
            req("schedule", "string", "Cron expression: minute hour day month weekday.", CronSchedule()),
            req("command", "string", "Command to run.", _SHELL),
            opt(
                "description",
                "string",
                "What the job is for.",
                Quoted(("nightly cleanup", "disk report", "dependency check", "backup")),
            ),
        ),
        (
            "{schedule}, have {command} happen",
            "set up a recurring job that does {command} {schedule}",
            "I want {command} to go off automatically {schedule}",
            "repeat {command} {schedule}, call it {description}",
        ),
    ),
    ToolSpec(
        "message_send",
        "developer",
        "Sends a chat message to a user handle in the team workspace.",
        (
            req("recipient", "string", "User handle, e.g. @maria.", HANDLE),
            req("text", "string", "Message text.", NOTE),
        ),
        (
            "ping {recipient} with {text}",
            "let {recipient} know {text}",
            "drop {recipient} a DM: {text}",
            "tell {recipient} over chat {text}",
        ),
        conflicts=("send_text",),
    ),
    ToolSpec(
        "clarify",
        "developer",
        "Asks the user a question before continuing; use when a request is unclear.",
        (
            req(
                "question",
                "string",
                "The question to ask.",
                Quoted(
                    (
                        "Which branch should I deploy?",
                        "Do you want the tests updated too?",
                        "Should I keep the old API?",
                        "Which environment is this for?",
                        "Can I delete the temp files?",
                    )
                ),
            ),
        ),
        (
            "before you touch anything, put this to me: {question}",
            "check with me first by asking {question}",
            "pop a question up for me: {question}",
            "I want to confirm something, ask me {question}",
        ),
        conflicts=("meta",),
    ),
    ToolSpec(
        "escalate",
        "developer",
        "Hands the current problem to a human team with a reason and severity.",
        (
            req(
                "reason",
                "string",
                "Why a human is needed.",
                Quoted(
                    (
                        "production database is unreachable",
                        "customer data may have leaked",
                        "payment webhook failing",
                        "certificate expires tonight",
                        "on-call pager is silent",
                    )
                ),
            ),
            enum_req(
                "severity",
                "How urgent it is.",
                choices(
                    ("low", ("low", "minor")),
                    ("medium", ("medium", "moderate")),
                    ("high", ("high", "serious")),
                    ("critical", ("critical", "sev-1")),
                ),
            ),
            opt("team", "string", "Team to hand it to.", words("sre", "security", "payments", "platform")),
        ),
        (
            "this is beyond us - get a human on it: {reason}, it's {severity}",
            "raise the alarm with the {team} folks, {reason}, {severity} priority",
            "I need people involved, {reason}; mark it {severity}",
            "hand this off to the humans ({severity}): {reason}",
        ),
        conflicts=("meta",),
    ),
)

__all__ = ["TOOLS"]
