import { createStyles } from 'plaited'
import { tabsTokens } from './tabs.tokens.ts'

export const styles = createStyles({
  tabs: {
    display: 'flex',
    flexDirection: 'column',
    gap: '1rem',
  },
  vertical: {
    flexDirection: 'row',
  },
  tablist: {
    display: 'flex',
    gap: '0.25rem',
    borderBottomWidth: '1px',
    borderBottomStyle: 'solid',
    borderBottomColor: tabsTokens.border,
  },
  tablistVertical: {
    flexDirection: 'column',
    borderBottomWidth: '0',
    borderRightWidth: '1px',
    borderRightStyle: 'solid',
    borderRightColor: tabsTokens.border,
  },
  tab: {
    padding: '0.5rem 1rem',
    border: 'none',
    borderBottomWidth: '2px',
    borderBottomStyle: 'solid',
    borderBottomColor: tabsTokens.panel,
    background: 'none',
    color: tabsTokens.text,
    fontSize: '1rem',
    cursor: 'pointer',
  },
  selected: {
    borderBottomColor: tabsTokens.active,
    color: tabsTokens.activeText,
    fontWeight: '600',
  },
  disabled: {
    color: tabsTokens.disabled,
    cursor: 'not-allowed',
  },
  panel: {
    padding: '1rem',
    backgroundColor: tabsTokens.panel,
    color: tabsTokens.text,
  },
})
