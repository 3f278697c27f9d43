/* Russian search treats ё and е as one letter, as Russian readers do: the Russian search index is
   written with е (site.py), and the query is folded the same way as it is typed. */
document.addEventListener("input", function (ev) {
  var el = ev.target;
  if (document.documentElement.lang !== "ru" || !(el instanceof HTMLInputElement)) return;
  if (!el.matches("[data-md-component=search-query]") || !/[ёЁ]/.test(el.value)) return;
  var pos = el.selectionStart;
  el.value = el.value.replace(/ё/g, "е").replace(/Ё/g, "Е");
  el.setSelectionRange(pos, pos);
}, true);
