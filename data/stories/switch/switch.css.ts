import { createStyles } from 'plaited'
import { switchTokens } from './switch.tokens.ts'

export const styles = createStyles({
  switch: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.75rem',
    padding: '0.25rem 0',
    border: 'none',
    background: 'none',
    color: switchTokens.label,
    fontSize: '1rem',
    cursor: 'pointer',
  },
  track: {
    display: 'inline-block',
    width: '2.5rem',
    height: '1.5rem',
    borderRadius: '999px',
    backgroundColor: switchTokens.trackOff,
  },
  trackOn: {
    backgroundColor: switchTokens.trackOn,
  },
  thumb: {
    display: 'block',
    width: '1.25rem',
    height: '1.25rem',
    margin: '0.125rem',
    borderRadius: '50%',
    backgroundColor: switchTokens.thumb,
  },
  thumbOn: {
    transform: 'translateX(1rem)',
  },
  disabled: {
    cursor: 'not-allowed',
  },
  trackDisabled: {
    backgroundColor: switchTokens.disabled,
  },
  hint: {
    margin: '0.25rem 0 0',
    fontSize: '0.875rem',
    color: switchTokens.hint,
  },
  list: {
    listStyle: 'none',
    margin: '0',
    padding: '0',
  },
  item: {
    padding: '0.75rem 0',
    borderBottomWidth: '1px',
    borderBottomStyle: 'solid',
    borderBottomColor: switchTokens.divider,
  },
})
