/* Russian search treats ё and е as one letter, as Russian readers do.  The Russian search index is
   written with е (site/build.py), and the query is folded the same way as it is typed.  So that readers
   still see ё: result titles get their letters back from search/titles_yo.json, excerpts the words
   that the pages always write with ё from search/words_yo.json, and the page a result opens
   highlights the searched words whichever way the page spells them. */
(function () {
  if (document.documentElement.lang !== "ru") return;
  var config = JSON.parse((document.getElementById("__config") || {}).textContent || "{}");
  var base = new URL(config.base || ".", location.href);

  document.addEventListener("input", function (ev) {
    var el = ev.target;
    if (!(el instanceof HTMLInputElement) || !el.matches("[data-md-component=search-query]")) return;
    if (!/[ёЁ]/.test(el.value)) return;
    var pos = el.selectionStart;
    el.value = el.value.replace(/ё/g, "е").replace(/Ё/g, "Е");
    el.setSelectionRange(pos, pos);
  }, true);

  /* Put ё back into a title, letter by letter: folding changed no length, marks only wrap letters. */
  function restore(el, original) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), node, at = 0;
    while ((node = walker.nextNode())) {
      var text = node.nodeValue, out = "";
      for (var i = 0; i < text.length; i++, at++) {
        var want = original.charAt(at);
        out += (want === "ё" || want === "Ё") && text.charAt(i).toLowerCase() === "е" ? want : text.charAt(i);
      }
      if (out !== text) node.nodeValue = out;
    }
  }

  /* Put ё back into the words of an excerpt that the pages always write with ё (words_yo.json). */
  function restoreWords(el) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      if (node.parentElement.closest("h1, h2")) continue;
      var text = node.nodeValue.replace(/[а-яА-Я]*[еЕ][а-яА-Я]*/g, function (word) {
        var written = words[word.toLowerCase()];
        if (!written || written.length !== word.length) return word;
        var out = "";
        for (var i = 0; i < word.length; i++) out += written.charAt(i) === "ё" ? (word.charAt(i) === "Е" ? "Ё" : "ё") : word.charAt(i);
        return out;
      });
      if (text !== node.nodeValue) node.nodeValue = text;
    }
  }

  function json(name) {
    return fetch(new URL("search/" + name, base)).then(function (r) { return r.ok ? r.json() : {}; })
      .catch(function () { return {}; });
  }
  var titles = null, words = null;
  json("titles_yo.json").then(function (t) { titles = t; fix(); });
  document.addEventListener("input", function () {  // the excerpts' words: only once the reader searches
    if (words) return;
    words = {};
    json("words_yo.json").then(function (w) { words = w; fix(); });
  }, true);

  function fix() {
    if (!titles) return;
    document.querySelectorAll(".md-search-result__link").forEach(function (link) {
      var url = new URL(link.href);
      var where = decodeURIComponent(url.pathname.slice(base.pathname.length)) + url.hash;
      var title = titles[where] || titles[where.split("#")[0]];
      var heading = link.querySelector("h1, h2");
      if (title && heading && heading.textContent.length === title.length) restore(heading, title);
      if (words) restoreWords(link);
    });
  }
  new MutationObserver(fix).observe(document.body, {childList: true, subtree: true});

  /* The page a result opened: highlight the searched words also where the page writes ё. */
  var words = new URLSearchParams(location.search).get("h");
  if (!words) return;
  var terms = words.split(/\s+/).filter(function (w) { return /[еЕ]/.test(w); }).map(function (w) {
    return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/[еЕё]/g, "[еёЕЁ]");
  });
  if (!terms.length) return;
  var pattern = new RegExp("(^|[^\\p{L}])(" + terms.join("|") + ")", "giu");
  function mark() {
    var root = document.querySelector(".md-content article") || document.body;
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), nodes = [], node;
    while ((node = walker.nextNode())) {
      if (/[ёЁ]/.test(node.nodeValue) && !node.parentElement.closest("mark, code, pre, script")) nodes.push(node);
    }
    nodes.forEach(function (node) {
      var text = node.nodeValue, frag = document.createDocumentFragment(), last = 0, m;
      pattern.lastIndex = 0;
      while ((m = pattern.exec(text))) {
        if (!/[ёЁ]/.test(m[2])) continue;
        var start = m.index + m[1].length;
        frag.appendChild(document.createTextNode(text.slice(last, start)));
        var el = document.createElement("mark");
        el.setAttribute("data-md-highlight", "");
        el.textContent = m[2];
        frag.appendChild(el);
        last = start + m[2].length;
      }
      if (last) {
        frag.appendChild(document.createTextNode(text.slice(last)));
        node.parentNode.replaceChild(frag, node);
      }
    });
  }
  if (document.readyState === "complete") mark(); else window.addEventListener("load", mark);
})();
