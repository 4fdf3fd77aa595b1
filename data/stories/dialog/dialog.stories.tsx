import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './dialog.css.ts'

export const meta = {
  title: 'Dialog',
  description: 'Modal dialogs labelled by their heading, each with a close button',
}

const DialogButton: FT<{ tone?: 'primary' | 'danger' | 'secondary'; busy?: boolean; type?: string }> = ({
  tone = 'secondary',
  type = 'button',
  busy = false,
  children,
  ...rest
}) => (
  <button
    type={type}
    disabled={busy}
    aria-busy={busy ? 'true' : undefined}
    {...joinStyles(styles.button, tone === 'primary' && styles.primary, tone === 'danger' && styles.danger, tone === 'secondary' && styles.secondary)}
    {...rest}
  >
    {children}
  </button>
)

const Dialog: FT<{ id: string; title: string; description?: string }> = ({ id, title, description, children }) => (
  <div {...styles.backdrop}>
    <div
      role='dialog'
      aria-modal='true'
      aria-labelledby={`${id}-title`}
      aria-describedby={description ? `${id}-description` : undefined}
      id={id}
      {...styles.dialog}
    >
      <header {...styles.header}>
        <h2 id={`${id}-title`} {...styles.title}>
          {title}
        </h2>
        <button type='button' aria-label='Close dialog' p-trigger={{ click: 'close' }} {...styles.close}>
          <span aria-hidden='true'>×</span>
        </button>
      </header>
      {description && (
        <p id={`${id}-description`} {...styles.body}>
          {description}
        </p>
      )}
      {children}
    </div>
  </div>
)

export const deleteProjectConfirm = story({
  intent: 'Create a modal dialog asking to confirm deleting the project "Apollo", with Cancel and Delete buttons',
  template: () => (
    <Dialog id='delete-project' title='Delete project?' description='Deleting "Apollo" removes all of its files. This cannot be undone.'>
      <footer {...styles.footer}>
        <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
        <DialogButton tone='danger' p-trigger={{ click: 'confirmDelete' }}>
          Delete project
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('role', 'dialog')
    assert({ given: 'an open dialog', should: 'be modal', actual: dialog?.getAttribute('aria-modal'), expected: 'true' })
  },
})

export const renameFileDialog = story({
  intent: 'Create a "Rename file" dialog containing a labelled "File name" input and a Save button',
  template: () => (
    <Dialog id='rename-file' title='Rename file'>
      <form {...styles.field}>
        <label htmlFor='rename-file-name'>File name</label>
        <input id='rename-file-name' name='fileName' type='text' value='quarterly-report.pdf' required={true} {...styles.input} />
        <footer {...styles.footer}>
          <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
          <DialogButton tone='primary' type='submit'>
            Save
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
})

export const savingDialog = story({
  intent: 'Create an "Edit billing address" dialog in a saving state, described by "Your changes are being saved.", where the Save button is busy and disabled',
  template: () => (
    <Dialog id='billing-dialog' title='Edit billing address' description='Your changes are being saved.'>
      <p role='status' {...styles.body}>
        Saving billing address
      </p>
      <footer {...styles.footer}>
        <DialogButton busy={true} tone='primary'>
          Saving
        </DialogButton>
      </footer>
    </Dialog>
  ),
})

export const keyboardShortcutsDialog = story({
  intent: 'Create an informational "Keyboard shortcuts" dialog listing three shortcuts with a close button',
  template: () => (
    <Dialog id='shortcuts' title='Keyboard shortcuts'>
      <ul>
        <li>Press / to focus search</li>
        <li>Press N to create a new note</li>
        <li>Press ? to open this list</li>
      </ul>
    </Dialog>
  ),
})

export const sessionTimeoutDialog = story({
  intent: 'A modal titled "Are you still there?" and described by "You will be signed out in two minutes.", offering a plain "Sign out" and a primary "Stay signed in"',
  template: () => (
    <Dialog id='session-timeout' title='Are you still there?' description='You will be signed out in two minutes.'>
      <footer {...styles.footer}>
        <DialogButton p-trigger={{ click: 'signOut' }}>Sign out</DialogButton>
        <DialogButton tone='primary' p-trigger={{ click: 'extendSession' }}>
          Stay signed in
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('role', 'dialog')
    assert({ given: 'a timeout warning', should: 'be described', actual: dialog?.getAttribute('aria-describedby'), expected: 'session-timeout-description' })
  },
})

export const inviteTeammateDialog = story({
  intent: 'An "Invite a teammate" modal with a required "Email address" field and a "Send invite" submit action',
  template: () => (
    <Dialog id='invite' title='Invite a teammate'>
      <form {...styles.field}>
        <label htmlFor='invite-email'>Email address</label>
        <input id='invite-email' name='email' type='email' required={true} {...styles.input} />
        <footer {...styles.footer}>
          <DialogButton tone='primary' type='submit'>
            Send invite
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'invite-email')
    assert({ given: 'the invite form', should: 'ask for an email', actual: input?.getAttribute('type'), expected: 'email' })
  },
})

export const discardDraftDialog = story({
  intent: 'Ask before throwing away an unsent message: a "Discard draft?" modal with "Keep editing" and a destructive "Discard"',
  template: () => (
    <Dialog id='discard-draft' title='Discard draft?'>
      <footer {...styles.footer}>
        <DialogButton p-trigger={{ click: 'close' }}>Keep editing</DialogButton>
        <DialogButton tone='danger' p-trigger={{ click: 'discard' }}>
          Discard
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('aria-labelledby', 'discard-draft-title')
    assert({ given: 'a discard prompt', should: 'be modal', actual: dialog?.getAttribute('aria-modal'), expected: 'true' })
  },
})

export const unsavedPlaylistDialog = story({
  intent: 'Create a "Save changes to playlist?" dialog explaining "Your new track order has not been saved." with a "Cancel" button, a destructive "Don\'t save" and a primary "Save playlist"',
  template: () => (
    <Dialog id='playlist-changes' title='Save changes to playlist?' description='Your new track order has not been saved.'>
      <footer {...styles.footer}>
        <DialogButton tone='secondary' p-trigger={{ click: 'close' }}>
          Cancel
        </DialogButton>
        <DialogButton tone='danger' p-trigger={{ click: 'discardChanges' }}>
          Don't save
        </DialogButton>
        <DialogButton tone='primary' p-trigger={{ click: 'savePlaylist' }}>
          Save playlist
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('role', 'dialog')
    assert({ given: 'unsaved changes', should: 'offer three choices', actual: dialog?.querySelectorAll('footer button').length, expected: 3 })
  },
})

export const removingGardenPlotDialog = story({
  intent: 'A "Remove garden plot" modal caught mid-removal, announcing "Removing plot B3" while its destructive "Removing" button is busy and cannot be pressed',
  template: () => (
    <Dialog id='remove-plot' title='Remove garden plot'>
      <p role='status' {...styles.body}>
        Removing plot B3
      </p>
      <footer {...styles.footer}>
        <DialogButton tone='danger' busy={true}>
          Removing
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByText }) => {
    const button = await findByText('Removing')
    assert({ given: 'a removal in progress', should: 'mark the button busy', actual: button?.getAttribute('aria-busy'), expected: 'true' })
    assert({ given: 'a removal in progress', should: 'disable the button', actual: button?.disabled, expected: true })
  },
})

export const addTravellerDialog = story({
  intent: 'Build an "Add traveller" dialog noting "Names must match the passport.", with a required "Full name" field, an optional "Date of birth" date field, a "Cancel" button and a primary "Add traveller" submit',
  template: () => (
    <Dialog id='add-traveller' title='Add traveller' description='Names must match the passport.'>
      <form {...styles.field}>
        <label htmlFor='traveller-name'>Full name</label>
        <input id='traveller-name' name='fullName' type='text' required={true} {...styles.input} />
        <label htmlFor='traveller-birth'>Date of birth</label>
        <input id='traveller-birth' name='dateOfBirth' type='date' {...styles.input} />
        <footer {...styles.footer}>
          <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
          <DialogButton tone='primary' type='submit'>
            Add traveller
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const name = await findByAttribute('id', 'traveller-name')
    const birth = await findByAttribute('id', 'traveller-birth')
    assert({ given: 'the traveller form', should: 'require a name', actual: name?.required, expected: true })
    assert({ given: 'the traveller form', should: 'leave the birth date optional', actual: birth?.required, expected: false })
  },
})

export const medicationReminderSetDialog = story({
  intent: 'An informational "Reminder set" dialog saying "We will remind you to take your medication at 8:00 every morning." with a single primary "Got it" button',
  template: () => (
    <Dialog id='reminder-set' title='Reminder set' description='We will remind you to take your medication at 8:00 every morning.'>
      <footer {...styles.footer}>
        <DialogButton tone='primary' p-trigger={{ click: 'close' }}>
          Got it
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('role', 'dialog')
    assert({ given: 'a confirmation notice', should: 'be described by its message', actual: dialog?.getAttribute('aria-describedby'), expected: 'reminder-set-description' })
  },
})

export const transferSentDialog = story({
  intent: 'Show a "Transfer sent" confirmation dialog listing the recipient "Maria Lopez" and the amount "250 EUR", with a plain "Done" button and a primary "Download receipt" button',
  template: () => (
    <Dialog id='transfer-sent' title='Transfer sent'>
      <dl {...styles.body}>
        <dt>Recipient</dt>
        <dd>Maria Lopez</dd>
        <dt>Amount</dt>
        <dd>250 EUR</dd>
      </dl>
      <footer {...styles.footer}>
        <DialogButton tone='secondary' p-trigger={{ click: 'close' }}>
          Done
        </DialogButton>
        <DialogButton tone='primary' p-trigger={{ click: 'downloadReceipt' }}>
          Download receipt
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByText }) => {
    const recipient = await findByText('Maria Lopez')
    assert({ given: 'a completed transfer', should: 'name the recipient', actual: recipient?.textContent, expected: 'Maria Lopez' })
  },
})
