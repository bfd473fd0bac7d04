// The home page's export buttons: each downloads a resource's CSV export with a progress bar, and resumes it
// where it broke off when the connection drops (docs/guide/csv-export.md, "Resuming a cut export").
//
// The export is asked for `resumable=true`, so every row ends with its resume token in a last column
// ($after). The page reads the stream record by record, counts the rows against X-Total-Count, keeps the
// file without that column, and after a network failure asks for the rest with `after=<last token>`.

const MAX_RESUMPTIONS = 5

/**
 * Splits CSV text into records as they complete. A record ends at a line break outside quotes (quotes are
 * doubled inside a quoted cell, so toggling on every quote is exact); its last cell, after the last comma
 * outside quotes, is the resume token.
 */
function csvRecords() {
  let pending = ''
  return (chunk, onRecord) => {
    const text = pending + chunk
    let start = 0
    let quoted = false
    let lastComma = -1
    for (let index = 0; index < text.length; index++) {
      const char = text[index]
      if (char === '"') quoted = !quoted
      else if (quoted) continue
      else if (char === ',') lastComma = index
      else if (char === '\n') {
        onRecord(text.slice(start, lastComma), text.slice(lastComma + 1, index))
        start = index + 1
        lastComma = -1
      }
    }
    pending = text.slice(start)
  }
}

/** One export button: its resource's path, the progress bar and the status line beside it. */
async function runExport(section) {
  const path = section.dataset.export
  const button = section.querySelector('button')
  const bar = section.querySelector('progress')
  const status = section.querySelector('.status')
  const link = section.querySelector('a.download')
  button.disabled = true
  link.hidden = true
  bar.removeAttribute('value')
  const lines = []
  let total
  let rows = 0
  let after
  let resumptions = 0
  const show = () => {
    if (total !== undefined) {
      bar.max = Math.max(total, rows, 1)
      bar.value = rows
    }
    status.textContent =
      `${rows.toLocaleString()}${total === undefined ? '' : ` of ${total.toLocaleString()}`} rows` +
      (resumptions ? ` (resumed ${resumptions}×)` : '')
  }
  for (;;) {
    const url = `/${path}/export?resumable=true${after ? `&after=${encodeURIComponent(after)}` : ''}`
    const split = csvRecords()
    let header = after === undefined
    try {
      const response = await fetch(url, { headers: { accept: 'text/csv' } })
      if (!response.ok)
        throw Object.assign(new Error(`${response.status}: ${await response.text()}`), { final: true })
      const counted = response.headers.get('x-total-count')
      if (counted !== null) total = Number(counted)
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        split(value, (record, token) => {
          lines.push(record + '\n')
          if (header) header = false
          else {
            rows++
            after = token
          }
        })
        show()
      }
      break
    } catch (error) {
      // A network failure resumes after the last complete row (or starts again before the first one);
      // an answer that is no export ends the download.
      if (error.final || resumptions >= MAX_RESUMPTIONS) {
        status.textContent = `Export failed: ${error.message}`
        button.disabled = false
        return
      }
      if (after === undefined) lines.length = 0
      resumptions++
    }
  }
  if (total === undefined) bar.max = Math.max(rows, 1)
  bar.value = rows
  show()
  link.href = URL.createObjectURL(new Blob(lines, { type: 'text/csv' }))
  link.download = `${path.split('/').pop()}.csv`
  link.hidden = false
  button.disabled = false
}

for (const section of document.querySelectorAll('[data-export]')) {
  section.querySelector('button').addEventListener('click', () => runExport(section))
}
