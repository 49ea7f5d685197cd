// Progressive enhancement of the Explore page: names suggested as one types, from the dashboard's
// own /suggest route (the typeahead service), as an ARIA 1.2 combobox with a listbox popup.
// Without this file the inputs are plain inputs of their GET forms, and work as such.
//
// Markup (insight-views.ts): <div class="combo" data-suggest="…/suggest" data-accounts="…/accounts/"
// data-kinds="accounts,…" data-limit="3" [data-complete="word"]><label for=…><input …></div>

/** Quiet time after the last keystroke before asking. */
const DEBOUNCE_MS = 150;
/** The service's bound on `q` (src/query/suggest-request.ts), in UTF-16 code units. */
const MAX_QUERY_LENGTH = 100;
/** Where a chosen topic or niche goes: the form's picker of that name. */
const PICKER_OF_KIND = { topic: 'topics', niche: 'niches' };
/** What a suggestion's count counts (one, many). */
const UNIT_OF_KIND = {
  account: ['follower', 'followers'],
  hashtag: ['post', 'posts'],
  mention: ['post', 'posts'],
  topic: ['post', 'posts'],
  niche: ['account', 'accounts'],
};
const numbers = new Intl.NumberFormat('en-US');

let comboboxes = 0;

/** The text cut to the service's bound, never inside a character. */
function bounded(text) {
  let out = '';
  for (const ch of text) {
    if (out.length + ch.length > MAX_QUERY_LENGTH) break;
    out += ch;
  }
  return out;
}

function span(className, text) {
  const element = document.createElement('span');
  element.className = className;
  element.textContent = text;
  return element;
}

function enhance(box) {
  const input = box.querySelector('input');
  if (!input) return;
  const listId = `suggestions-${++comboboxes}`;
  const list = document.createElement('ul');
  list.id = listId;
  list.className = 'suggestions';
  list.hidden = true;
  list.setAttribute('role', 'listbox');
  list.setAttribute('aria-label', `Suggestions for ${box.querySelector('label')?.textContent ?? 'this field'}`);
  // Announces how many suggestions there are (a listbox popup is otherwise silent until entered).
  const status = document.createElement('p');
  status.className = 'visually-hidden';
  status.setAttribute('role', 'status');
  box.append(list, status);
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-expanded', 'false');
  input.setAttribute('aria-controls', listId);
  input.setAttribute('autocomplete', 'off');

  const byWord = box.dataset.complete === 'word';
  let timer = 0;
  let inFlight = false;
  let askAgain = false;
  let items = [];
  let active = -1;

  /** What is being completed: the word at the caret (a query box), or the whole text. */
  function typed() {
    const value = input.value;
    if (!byWord) return { start: 0, end: value.length, text: value.trim() };
    const caret = input.selectionStart ?? value.length;
    const start = value.slice(0, caret).search(/\S*$/);
    const end = caret + value.slice(caret).search(/\s|$/);
    return { start, end, text: value.slice(start, end) };
  }

  function close() {
    list.hidden = true;
    active = -1;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  }

  function highlight() {
    for (const [i, option] of [...list.children].entries()) option.setAttribute('aria-selected', String(i === active));
    const current = list.children[active];
    if (current) {
      input.setAttribute('aria-activedescendant', current.id);
      current.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  }

  function option(suggestion, i) {
    const item = document.createElement('li');
    item.id = `${listId}-${i}`;
    item.setAttribute('role', 'option');
    item.setAttribute('aria-selected', 'false');
    item.dataset.kind = suggestion.kind;
    item.dataset.value = suggestion.value;
    item.dataset.count = String(suggestion.count);
    const unit = UNIT_OF_KIND[suggestion.kind]?.[suggestion.count === 1 ? 0 : 1] ?? '';
    const parts = [
      span('label', suggestion.label),
      // An account's handle beside its display name; other kinds' labels say it already.
      suggestion.kind === 'account' ? span('value', suggestion.value) : null,
      span('kind', suggestion.kind),
      span('count', `${numbers.format(suggestion.count)} ${unit}`.trim()),
    ].filter(Boolean);
    // Spaces between the parts, so the option's accessible name reads as words.
    item.append(...parts.flatMap((part, i) => (i === 0 ? [part] : [' ', part])));
    item.addEventListener('click', () => choose(i));
    return item;
  }

  function show(data) {
    items = data;
    list.replaceChildren(...data.map(option));
    active = -1;
    list.hidden = data.length === 0;
    input.setAttribute('aria-expanded', String(data.length > 0));
    input.removeAttribute('aria-activedescendant');
    status.textContent =
      data.length === 0
        ? 'No suggestions.'
        : `${data.length} suggestion${data.length === 1 ? '' : 's'}; up and down arrows to choose.`;
  }

  /** Asks for what is typed now; at most one request in flight, the latest text asked after it. */
  async function ask() {
    if (inFlight) {
      askAgain = true;
      return;
    }
    const q = bounded(typed().text);
    if (q.replace(/^[@#]/, '').trim() === '') {
      items = [];
      close();
      return;
    }
    inFlight = true;
    try {
      const params = new URLSearchParams({ q, kinds: box.dataset.kinds, limit: box.dataset.limit });
      const response = await fetch(`${box.dataset.suggest}?${params}`, {
        headers: { accept: 'application/json' },
        credentials: 'same-origin',
      });
      const answer = response.ok ? await response.json() : null;
      // Only the answer to what is typed now is shown; a newer text is asked below.
      if (answer && Array.isArray(answer.data) && bounded(typed().text) === q && document.activeElement === input)
        show(answer.data);
      else if (!answer) close();
    } catch {
      close();
    } finally {
      inFlight = false;
      if (askAgain) {
        askAgain = false;
        void ask();
      }
    }
  }

  /** Replaces what was being completed with `text`, the caret after it. */
  function replaceTyped(at, text) {
    const before = input.value.slice(0, at.start);
    const after = input.value.slice(at.end);
    input.value = before + text + (text === '' ? after.replace(/^\s+/, '') : after);
    const caret = before.length + text.length;
    input.setSelectionRange(caret, caret);
  }

  /**
   * An account opens its page; a topic or niche is picked in its picker (the typed word goes);
   * a hashtag or mention takes the typed word's place in the query, where the query reads it as
   * an exact name.
   */
  function choose(i) {
    const suggestion = items[i];
    if (!suggestion) return;
    close();
    if (suggestion.kind === 'account') {
      const handle = suggestion.value.replace(/^@/, '');
      window.location.assign(`${box.dataset.accounts}@${encodeURIComponent(handle)}`);
      return;
    }
    const at = typed();
    const pickerName = PICKER_OF_KIND[suggestion.kind];
    const picker = pickerName ? input.form?.elements.namedItem(pickerName) : null;
    if (picker instanceof HTMLSelectElement) {
      let picked = [...picker.options].find((o) => o.value === suggestion.value);
      if (!picked) {
        picked = new Option(suggestion.label, suggestion.value);
        picker.add(picked);
      }
      picked.selected = true;
      replaceTyped(at, '');
      status.textContent = `${suggestion.label} is picked in ${picker.name}.`;
    } else {
      replaceTyped(at, `${suggestion.value} `);
    }
    input.focus();
  }

  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void ask(), DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (event) => {
    if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && items.length > 0) {
      event.preventDefault();
      list.hidden = false;
      input.setAttribute('aria-expanded', 'true');
      const last = items.length - 1;
      if (event.key === 'ArrowDown') active = active >= last ? 0 : active + 1;
      else active = active <= 0 ? last : active - 1;
      highlight();
    } else if (event.key === 'Enter' && !list.hidden && active >= 0) {
      event.preventDefault();
      choose(active);
    } else if (event.key === 'Escape' && !list.hidden) {
      event.preventDefault();
      close();
    }
  });
  input.addEventListener('blur', close);
  // A click on a suggestion keeps the focus in the input (no blur closing the list first).
  list.addEventListener('mousedown', (event) => event.preventDefault());
}

document.addEventListener('DOMContentLoaded', () => {
  for (const box of document.querySelectorAll('.combo[data-suggest]')) enhance(box);
});
