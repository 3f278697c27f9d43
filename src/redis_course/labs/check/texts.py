"""Words of the lab commands' tables and feedback, in the course's three languages, and what of a
student's text they show (:func:`plain_text`: nothing that steers a terminal, a spreadsheet or XML)."""

from __future__ import annotations

import re

import wcwidth

_XML_BAD = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# 8-bit C1 sequences (wcwidth removes the 7-bit ESC forms): strings (DCS, SOS, OSC, PM, APC) up to
# their terminator, and CSI with its parameters.
_C1_STRING = re.compile("[\x90\x98\x9d\x9e\x9f](?:[^\x07\x9c\x1b]|\x1b(?!\\\\))*(?:\x07|\x9c|\x1b\\\\)?")
_C1_CSI = re.compile("\x9b[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?")
# What is left that steers a terminal or the text's direction: controls but the line break, DEL,
# C1, bidi marks, overrides and isolates, line and paragraph separators.
_STEERING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

TEXTS: dict[str, dict[str, str]] = {
    "lab": {"en": "Lab", "ru": "Работа", "zh": "实验"},
    "test": {"en": "Test", "ru": "Тест", "zh": "测试"},
    "points": {"en": "Points", "ru": "Баллы", "zh": "得分"},
    "result": {"en": "Result", "ru": "Результат", "zh": "结果"},
    "total": {"en": "Total", "ru": "Итого", "zh": "总计"},
    "hint": {"en": "Hint", "ru": "Подсказка", "zh": "提示"},
    "passed": {"en": "passed", "ru": "пройден", "zh": "通过"},
    "failed": {"en": "failed", "ru": "не пройден", "zh": "未通过"},
    "error": {"en": "error", "ru": "ошибка", "zh": "错误"},
    "skipped": {"en": "skipped", "ru": "пропущен", "zh": "跳过"},
    "not-run": {"en": "not run", "ru": "не запущен", "zh": "未运行"},
    "timeout": {"en": "time limit", "ru": "превышен лимит времени", "zh": "超时"},
    "crash": {"en": "process crashed", "ru": "процесс упал", "zh": "进程崩溃"},
    "import-error": {"en": "module not loaded", "ru": "модуль не загрузился", "zh": "模块无法加载"},
    "not-implemented": {"en": "not written yet", "ru": "ещё не написана", "zh": "尚未实现"},
    "missing": {"en": "no lab.py", "ru": "нет lab.py", "zh": "缺少 lab.py"},
    "grader-error": {"en": "grader error", "ru": "ошибка проверки", "zh": "评分程序出错"},
    "backend": {"en": "Redis used", "ru": "Redis для проверки", "zh": "使用的 Redis"},
    "all_passed": {
        "en": "All public tests pass. The grader also runs hidden tests.",
        "ru": "Все открытые тесты пройдены. При оценке запускаются ещё и скрытые тесты.",
        "zh": "所有公开测试均已通过。评分时还会运行隐藏测试。",
    },
    "some_failed": {
        "en": "Fix the failing tests and run the check again.",
        "ru": "Исправьте непройденные тесты и запустите проверку снова.",
        "zh": "请修复未通过的测试，然后再次运行检查。",
    },
    "feedback_title": {
        "en": "Feedback for {student}",
        "ru": "Результаты проверки: {student}",
        "zh": "{student} 的反馈",
    },
    "score_line": {
        "en": "Score: **{points:g} / {max_points:g}**",
        "ru": "Итог: **{points:g} из {max_points:g}**",
        "zh": "得分：**{points:g} / {max_points:g}**",
    },
    "hidden_test": {"en": "hidden test", "ru": "скрытый тест", "zh": "隐藏测试"},
    "what_happened": {"en": "What happened", "ru": "Что произошло", "zh": "发生了什么"},
    "your_output": {
        "en": "What your code printed (end)",
        "ru": "Что напечатал ваш код (конец)",
        "zh": "你的代码输出（末尾）",
    },
}


def t(key: str, lang: str = "en", **fields: object) -> str:
    texts = TEXTS[key]
    return texts.get(lang, texts["en"]).format(**fields)


def plain_text(value: object, *, one_line: bool = False, limit: int | None = None, tail: bool = False) -> str:
    """``value`` as text a terminal, a spreadsheet, XML or JSON shows as it is: escape sequences
    (7-bit by wcwidth, 8-bit C1 here), then every control character but the line break, bidi
    controls and characters XML cannot hold (lone surrogates too) are removed; tabs become spaces.
    ``one_line``: line breaks become spaces.  ``limit``: at most that many characters, the first
    ones (the last ones with ``tail``), with ``…`` where text was cut."""
    s = wcwidth.strip_sequences(_C1_CSI.sub("", _C1_STRING.sub("", str(value))))
    s = s.replace("\t", "    ").replace("\r\n", "\n").replace("\r", "\n")
    s = _XML_BAD.sub("", _STEERING.sub("", s))
    if one_line:
        s = " ".join(s.split("\n"))
    if limit is not None and len(s) > limit:
        s = "…" + s[-(limit - 1) :] if tail else s[: limit - 1] + "…"
    return s
