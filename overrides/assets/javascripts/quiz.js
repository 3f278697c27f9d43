/* Check-your-understanding questions (rendered at build time by redis_course.quiz.hook).
 *
 * "Check" compares the ticked options with the answer, shows the explanation (and, for a wrong
 * option, the misconception it stands for), and keeps the answer in localStorage under the
 * question's language-independent id: an answer given on the English page is there on the Russian
 * and Chinese pages too.  Nothing is sent anywhere.  On load, earlier answers are restored into
 * the status line and the summary, both of which already have their space: nothing moves.
 */
(function () {
  "use strict";
  var KEY = "redis-course:quiz:v1";
  var stringsEl = document.getElementById("course-quiz-strings");
  var S = stringsEl ? JSON.parse(stringsEl.textContent) : {};

  function load() {
    try {
      var data = JSON.parse(window.localStorage.getItem(KEY) || "{}");
      return data && typeof data === "object" ? data : {};
    } catch (e) {
      return {};
    }
  }

  function save(data) {
    try {
      window.localStorage.setItem(KEY, JSON.stringify(data));
    } catch (e) { /* storage full or disabled: the page still works, it just forgets */ }
  }

  function fill(text, fields) {
    return text.replace(/\{(\w+)\}/g, function (m, k) { return k in fields ? String(fields[k]) : m; });
  }

  function picked(box) {
    return Array.prototype.filter.call(box.querySelectorAll(".course-quiz__options input"), function (i) {
      return i.checked;
    }).map(function (i) { return i.value; });
  }

  function sameSet(a, b) {
    if (a.length !== b.length) return false;
    var s = a.slice().sort(), t = b.slice().sort();
    return s.every(function (x, i) { return x === t[i]; });
  }

  function mistakes(box, choice, answer) {
    // radio: the chosen wrong option; checkboxes: every option whose tick differs from the answer
    var ids = Array.prototype.map.call(box.querySelectorAll(".course-quiz__options input"), function (i) {
      return i.value;
    });
    return ids.filter(function (id) {
      return (choice.indexOf(id) >= 0) !== (answer.indexOf(id) >= 0);
    });
  }

  function show(box, choice) {
    var answer = JSON.parse(box.getAttribute("data-answer"));
    var right = sameSet(choice, answer);
    var wrongIds = right ? [] : mistakes(box, choice, answer);
    var feedback = box.querySelector(".course-quiz__feedback");
    Array.prototype.forEach.call(feedback.querySelectorAll(".course-quiz__why"), function (el) {
      var f = el.getAttribute("data-for");
      el.hidden = f === "right" ? !right : wrongIds.indexOf(f) < 0;
    });
    var predicted = feedback.querySelector("[data-predicted]");
    if (predicted) {
      var input = box.querySelector('.course-quiz__options input[value="' + choice[0] + '"]');
      predicted.textContent = input ? input.closest("label").textContent.trim() : "";
    }
    feedback.hidden = false;
    box.classList.toggle("course-quiz--right", right);
    box.classList.toggle("course-quiz--wrong", !right);
    box.querySelector(".course-quiz__status").textContent = right ? S.right : S.wrong;
    return right;
  }

  function summarise() {
    var data = load();
    Array.prototype.forEach.call(document.querySelectorAll(".course-quiz-summary"), function (sum) {
      var items = sum.querySelectorAll("[data-quiz-ref]");
      var answered = 0, right = 0;
      Array.prototype.forEach.call(items, function (li) {
        var rec = data[li.getAttribute("data-quiz-ref")];
        var state = li.querySelector(".course-quiz-summary__state");
        if (rec) {
          answered += 1;
          if (rec.right) right += 1;
        }
        state.textContent = "(" + (rec ? (rec.right ? S.state_right : S.state_wrong) : S.state_open) + ")";
        li.querySelector(".course-quiz-summary__mark").textContent = rec ? (rec.right ? "✓" : "✗") : "–";
        li.classList.toggle("course-quiz-summary--right", !!(rec && rec.right));
      });
      sum.querySelector(".course-quiz-summary__score").textContent = answered
        ? fill(S.summary_score, {answered: answered, total: items.length, right: right})
        : S.summary_none;
    });
  }

  function restore(box, rec) {
    Array.prototype.forEach.call(box.querySelectorAll(".course-quiz__options input"), function (i) {
      i.checked = rec ? rec.picked.indexOf(i.value) >= 0 : false;
    });
    box.querySelector(".course-quiz__feedback").hidden = true;
    box.classList.remove("course-quiz--right", "course-quiz--wrong");
    box.querySelector(".course-quiz__status").textContent = rec
      ? (rec.right ? S.answered_right : S.answered_wrong) : "";
  }

  var boxes = document.querySelectorAll(".course-quiz[data-quiz-id]");
  var stored = load();
  Array.prototype.forEach.call(boxes, function (box) {
    var id = box.getAttribute("data-quiz-id");
    if (stored[id]) restore(box, stored[id]);
    box.querySelector(".course-quiz__check").addEventListener("click", function () {
      var choice = picked(box);
      if (!choice.length && box.getAttribute("data-kind") !== "race") {
        box.querySelector(".course-quiz__status").textContent = S.pick;
        return;
      }
      var right = show(box, choice);
      var data = load();
      data[id] = {picked: choice, right: right, at: Date.now()};
      save(data);
      summarise();
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll(".course-quiz-summary__reset"), function (btn) {
    btn.addEventListener("click", function () {
      var data = load();
      Array.prototype.forEach.call(boxes, function (box) {
        delete data[box.getAttribute("data-quiz-id")];
        restore(box, null);
      });
      save(data);
      summarise();
      btn.closest(".course-quiz-summary").querySelector(".course-quiz-summary__score").textContent = S.reset_done;
    });
  });

  summarise();
})();
