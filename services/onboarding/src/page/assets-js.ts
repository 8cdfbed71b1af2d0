/**
 * Progressive enhancement for the connect page; every form works without it. Localised texts come
 * from data attributes rendered by the server (`data-show-label`, `data-hide-label`,
 * `data-match-message`, `data-busy-label`). Loaded as an external deferred script: the page's CSP
 * allows no inline script. Plain ES2017, no framework.
 */
export const CONNECT_JS = String.raw`(function () {
  'use strict';
  var doc = document;

  function all(selector, root) {
    return Array.prototype.slice.call((root || doc).querySelectorAll(selector));
  }

  // reCAPTCHA callbacks (named in data-callback / data-expired-callback of the widget).
  function setCaptchaToken(value) {
    all('input[name="recaptcha_token"]').forEach(function (input) { input.value = value; });
  }
  window.connectCaptchaSolved = function (token) { setCaptchaToken(String(token || '')); };
  window.connectCaptchaExpired = function () { setCaptchaToken(''); };

  // Error summary: start keyboard and screen reader users at the list of problems.
  var summary = doc.getElementById('error-summary');
  if (summary) {
    summary.focus();
    all('a[href^="#"]', summary).forEach(function (link) {
      link.addEventListener('click', function (event) {
        var target = doc.getElementById(link.getAttribute('href').slice(1));
        if (!target) return;
        event.preventDefault();
        var label = doc.querySelector('label[for="' + target.id + '"]');
        (label || target).scrollIntoView({ block: 'center' });
        target.focus({ preventScroll: true });
      });
    });
  }

  // Show / hide password.
  all('input[data-show-label]').forEach(function (input) {
    var showText = input.getAttribute('data-show-label');
    var hideText = input.getAttribute('data-hide-label') || showText;
    var button = doc.createElement('button');
    button.type = 'button';
    button.className = 'toggle-password';
    button.setAttribute('aria-controls', input.id);
    button.textContent = showText;
    button.addEventListener('click', function () {
      var reveal = input.type === 'password';
      input.type = reveal ? 'text' : 'password';
      button.textContent = reveal ? hideText : showText;
    });
    input.parentNode.insertBefore(button, input.nextSibling);
    if (input.form) {
      input.form.addEventListener('submit', function () {
        input.type = 'password';
        button.textContent = showText;
      });
    }
  });

  // Live check that the confirmation matches the password.
  all('input[data-match]').forEach(function (confirm) {
    var original = doc.getElementById(confirm.getAttribute('data-match'));
    if (!original) return;
    var message = confirm.getAttribute('data-match-message') || '';
    var live = doc.getElementById(confirm.id + '-live');
    var serverError = doc.getElementById(confirm.id + '-error');
    function check(final) {
      var first = original.value;
      var second = confirm.value;
      var differs = second !== '' && second !== first;
      // While the confirmation is still a prefix of the password the user is typing: no alarm yet.
      var typing = !final && second.length < first.length && first.indexOf(second) === 0;
      confirm.setCustomValidity(differs ? message : '');
      if (differs && !typing) {
        confirm.setAttribute('aria-invalid', 'true');
        if (live) live.textContent = message;
      } else {
        if (live) live.textContent = '';
        if (second !== '' && !differs) {
          confirm.removeAttribute('aria-invalid');
          if (serverError && !serverError.hidden) {
            // A fixed mismatch: hide the server's message and stop announcing it.
            serverError.hidden = true;
            var ids = (confirm.getAttribute('aria-describedby') || '').split(' ').filter(function (id) {
              return id !== '' && id !== serverError.id;
            });
            confirm.setAttribute('aria-describedby', ids.join(' '));
          }
        }
      }
    }
    confirm.addEventListener('input', function () { check(false); });
    confirm.addEventListener('change', function () { check(true); });
    original.addEventListener('input', function () { if (confirm.value !== '') check(false); });
  });

  // IBAN: group in fours when leaving the field.
  all('input[data-iban]').forEach(function (input) {
    input.addEventListener('blur', function () {
      var compact = input.value.replace(/\s+/g, '').toUpperCase();
      input.value = compact.replace(/(.{4})(?=.)/g, '$1 ');
    });
  });

  // Busy state; a second submit of the same form is ignored.
  function setBusy(form, busy) {
    if (busy) form.setAttribute('aria-busy', 'true'); else form.removeAttribute('aria-busy');
    all('button[type="submit"]', form).forEach(function (button) {
      if (busy) {
        button.setAttribute('data-idle-label', button.textContent);
        var busyText = button.getAttribute('data-busy-label');
        if (busyText) button.textContent = busyText;
        button.classList.add('is-busy');
        button.setAttribute('aria-disabled', 'true');
        // Disabled only after the submission has taken the form's data.
        window.setTimeout(function () { button.disabled = true; }, 0);
      } else if (button.hasAttribute('data-idle-label')) {
        button.textContent = button.getAttribute('data-idle-label');
        button.removeAttribute('data-idle-label');
        button.classList.remove('is-busy');
        button.removeAttribute('aria-disabled');
        button.disabled = false;
      }
    });
  }
  all('form').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      if (form.getAttribute('aria-busy') === 'true') {
        event.preventDefault();
        return;
      }
      setBusy(form, true);
    });
  });
  // Coming back through the browser history restores the page as it was left: make it usable.
  window.addEventListener('pageshow', function (event) {
    if (event.persisted) all('form[aria-busy="true"]').forEach(function (form) { setBusy(form, false); });
  });
})();
`;
