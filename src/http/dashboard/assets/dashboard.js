// Progressive enhancement only: every page works without this file.
// A copy button for a new key's secret, and a confirmation before revoking.
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.dataset.copy);
    if (!source || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      await navigator.clipboard.writeText(source.textContent.trim());
      button.textContent = 'Copied';
    });
  }
  for (const button of document.querySelectorAll('button[data-confirm]')) {
    button.form.addEventListener('submit', (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }
});
